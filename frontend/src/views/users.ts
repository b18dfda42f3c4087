import { endpoints, isAbortError, type User } from '../api';
import { busy, clear, confirmDialog, emptyState, errorBox, field, formatDate, h, loading, notice } from '../dom';
import type { ViewContext } from '../router';

const ROLES: ReadonlyArray<[string, string]> = [
  ['viewer', 'Viewer — reads everything but secrets'],
  ['operator', 'Operator — also resets breakers, clears cooldowns, releases leases, pauses'],
  ['admin', 'Admin — everything: connections, keys, settings, users'],
];

function roleSelect(id: string, value: string): HTMLSelectElement {
  const sel = h('select', { id }, ROLES.map(([r, text]) => h('option', { value: r, selected: r === value }, text))) as HTMLSelectElement;
  return sel;
}

/**
 * The Users page (admins): the people who sign in to the dashboard and the
 * management API, their roles, and new local accounts.
 */
export function renderUsers(root: HTMLElement, ctx: ViewContext): void {
  const heading = h('h1', { tabindex: '-1' }, 'Users');
  const listArea = h('div', { class: 'list-area', 'aria-live': 'polite' });
  const message = h('div', { class: 'row-message' });
  clear(
    root,
    h('div', { class: 'page-head' }, heading),
    h('p', { class: 'muted page-intro' }, 'People who sign in with a password or single sign-on. The management token keeps working as admin.'),
    message,
    listArea,
    renderCreateForm(),
  );

  async function load(): Promise<void> {
    clear(listArea, loading('Loading users…'));
    try {
      const users = await endpoints.listUsers(ctx.signal);
      if (ctx.signal.aborted) return;
      renderList(users);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    }
  }

  function renderList(users: User[]): void {
    if (!users.length) {
      clear(listArea, emptyState('No users yet — add one below', 'Until then the dashboard asks for the management token.'));
      return;
    }
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table' },
          h('caption', { class: 'visually-hidden' }, `${users.length} user${users.length === 1 ? '' : 's'}`),
          h('thead', null, h('tr', null, ['Email', 'Role', 'Sign-in', 'Last sign-in'].map((t) => h('th', { scope: 'col' }, t)), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
          h('tbody', null, users.map(renderRow)),
        ),
      ),
    );
  }

  function renderRow(u: User): HTMLTableRowElement {
    const sel = roleSelect(`role-${u.id}`, u.role);
    sel.setAttribute('aria-label', `Role of ${u.email}`);
    sel.addEventListener('change', async () => {
      try {
        await endpoints.updateUser(u.id, { role: sel.value });
        if (!ctx.signal.aborted) clear(message, notice(`${u.email} is now ${sel.value}.`, 'success'));
      } catch (err) {
        if (!ctx.signal.aborted) clear(message, errorBox(err));
        sel.value = u.role;
      }
    });
    const del = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Delete user ${u.email}` }, 'Delete');
    del.addEventListener('click', async () => {
      const yes = await confirmDialog({ title: 'Delete user?', message: `Delete ${u.email}? Their sessions end now; keys they own lose their owner.`, confirmLabel: 'Delete', danger: true });
      if (!yes) return;
      await busy([del], async () => {
        try {
          await endpoints.deleteUser(u.id);
          if (!ctx.signal.aborted) clear(message, notice(`Deleted ${u.email}.`, 'success'));
          void load();
        } catch (err) {
          if (!ctx.signal.aborted) clear(message, errorBox(err));
        }
      });
    });
    const kinds = [u.hasPassword ? 'password' : '', u.sso ? 'SSO' : ''].filter(Boolean).join(', ') || '—';
    return h(
      'tr',
      { 'data-user-id': u.id },
      h('td', null, h('div', { class: 'cell-main wrap-anywhere' }, u.email), u.name ? h('div', { class: 'muted small' }, u.name) : null),
      h('td', null, sel),
      h('td', null, kinds),
      h('td', null, u.lastLoginAt ? formatDate(u.lastLoginAt) : h('span', { class: 'muted' }, 'never')),
      h('td', { class: 'actions' }, del),
    );
  }

  function renderCreateForm(): HTMLElement {
    const email = h('input', { id: 'user-email', type: 'email', required: true, autocomplete: 'off', maxlength: '254' }) as HTMLInputElement;
    const name = h('input', { id: 'user-name', autocomplete: 'off', maxlength: '100' }) as HTMLInputElement;
    const role = roleSelect('user-role', 'viewer');
    const password = h('input', { id: 'user-password', type: 'password', autocomplete: 'new-password', minlength: '10', maxlength: '72' }) as HTMLInputElement;
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add user');
    const status = h('div', { class: 'form-status' });
    const fieldset = h(
      'fieldset',
      { class: 'form-grid' },
      field('Email', email),
      field('Name', name),
      field('Role', role),
      field('Password', password, '10 to 72 characters. Leave empty for a single sign-on user.'),
    );
    const form = h('form', { class: 'card', 'aria-labelledby': 'add-user-title' }, h('h2', { id: 'add-user-title' }, 'Add user'), fieldset, status, h('div', { class: 'form-actions' }, submit));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (!form.reportValidity()) return;
      status.replaceChildren();
      await busy([fieldset, submit], async () => {
        try {
          const body: { email: string; name?: string; role: string; password?: string } = { email: email.value.trim(), role: role.value };
          if (name.value.trim()) body.name = name.value.trim();
          if (password.value) body.password = password.value;
          const { user } = await endpoints.createUser(body);
          if (ctx.signal.aborted) return;
          form.reset();
          clear(message, notice(`Added ${user.email} (${user.role}).`, 'success'));
          void load();
        } catch (err) {
          if (!ctx.signal.aborted) clear(status, errorBox(err));
        }
      });
    });
    return form;
  }

  void load();
}
