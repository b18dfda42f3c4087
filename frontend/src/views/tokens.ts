import { endpoints, getSession, isAbortError, type CreatedManagementToken } from '../api';
import { busy, clear, confirmDialog, emptyState, errorBox, field, formatDate, h, loading, notice } from '../dom';
import { revokeMessage, roleChoices, roleLabel, roleOption, toTokenRow, tokenAccess, type TokenRow } from '../lib/tokens';
import { describeError } from '../lib/errors';
import { knownSentence } from '../lib/words';
import { showSecretOnce } from '../reveal';
import type { ViewContext } from '../router';
import { routeNeed } from '../lib/access';

/** An error box that leads with the catalogue's plain sentence for the code when it has one. */
export function plainErrorBox(err: unknown, retry?: () => void): HTMLElement {
  const box = errorBox(err, retry);
  const plain = knownSentence(describeError(err).code);
  const msg = box.querySelector('.alert-message');
  if (plain && msg) msg.textContent = plain;
  return box;
}

/** The role the page acts for: the session's; the instance's management token (role unknown) is admin. */
function currentRole(): string {
  return getSession()?.role ?? 'admin';
}

/**
 * The Tokens page: scoped management tokens (`omt_…`) for scripts and other
 * tools — who made each, its role, when it was last used — minting one (its
 * value shown once) and revoking one. Admins only; others see why.
 */
export function renderTokens(root: HTMLElement, ctx: ViewContext): void {
  const role = currentRole();
  const routes = getSession()?.routes;
  const access = tokenAccess(role, routeNeed(routes, 'GET /api/tokens'), routeNeed(routes, 'POST /api/tokens'));
  const heading = h('h1', { tabindex: '-1' }, 'Tokens');
  const listArea = h('div', { class: 'list-area', 'aria-live': 'polite' });
  const message = h('div', { class: 'row-message' });
  const reveal = h('div');
  const intro = h(
    'p',
    { class: 'muted page-intro' },
    'Management tokens let a script or another tool use the management API with a role of its own (send it as ',
    h('code', null, 'Authorization: Bearer omt_…'),
    '). A token can do at most what the person who created it can; deleting that person revokes it.',
  );
  if (!access.list) {
    clear(root, h('div', { class: 'page-head' }, heading), intro, h('div', { class: 'alert alert-info', role: 'status', 'data-testid': 'tokens-forbidden' }, access.reason));
    return;
  }
  clear(root, h('div', { class: 'page-head' }, heading), intro, message, reveal, listArea, access.manage ? renderCreateForm() : null);

  async function load(): Promise<void> {
    clear(listArea, loading('Loading tokens…'));
    try {
      const tokens = await endpoints.listTokens(ctx.signal);
      if (ctx.signal.aborted) return;
      renderList(tokens.map(toTokenRow));
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, plainErrorBox(err, () => void load()));
    }
  }

  function renderList(rows: TokenRow[]): void {
    if (!rows.length) {
      clear(listArea, emptyState('No tokens yet', access.manage ? 'Create one below for a script or a tool.' : undefined));
      return;
    }
    const heads = ['Name', 'Role', 'Created by', 'Created', 'Last used'];
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table tokens-table' },
          h('caption', { class: 'visually-hidden' }, `${rows.length} token${rows.length === 1 ? '' : 's'}`),
          h(
            'thead',
            null,
            h('tr', null, heads.map((t) => h('th', { scope: 'col' }, t)), access.manage ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')) : null),
          ),
          h('tbody', null, rows.map(renderRow)),
        ),
      ),
    );
  }

  function renderRow(t: TokenRow): HTMLTableRowElement {
    let actions: HTMLElement | null = null;
    if (access.manage) {
      const del = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Revoke token ${t.name}` }, 'Revoke');
      del.addEventListener('click', async () => {
        const yes = await confirmDialog({ title: 'Revoke token?', message: revokeMessage(t), confirmLabel: 'Revoke', danger: true });
        if (!yes) return;
        await busy([del], async () => {
          try {
            await endpoints.deleteToken(t.id);
            if (!ctx.signal.aborted) clear(message, notice(`Revoked “${t.name}”.`, 'success'));
            void load();
          } catch (err) {
            if (!ctx.signal.aborted) clear(message, plainErrorBox(err));
          }
        });
      });
      actions = h('td', { class: 'actions' }, del);
    }
    return h(
      'tr',
      { 'data-token-id': t.id },
      h('td', null, h('div', { class: 'cell-main wrap-anywhere' }, t.name), h('div', { class: 'muted small' }, h('code', null, t.masked))),
      h('td', { title: roleOption(t.role) }, t.roleLabel),
      h('td', { class: 'wrap-anywhere' }, t.creator),
      h('td', null, t.createdAt ? formatDate(t.createdAt) : h('span', { class: 'muted' }, '—')),
      h('td', null, t.lastUsedAt ? formatDate(t.lastUsedAt) : h('span', { class: 'muted' }, 'never')),
      actions,
    );
  }

  function renderCreateForm(): HTMLElement {
    const name = h('input', { id: 'token-name', required: true, autocomplete: 'off', maxlength: '100', placeholder: 'e.g. ci-deploy' }) as HTMLInputElement;
    const choices = roleChoices(role);
    const roleSel = h(
      'select',
      { id: 'token-role' },
      choices.map((r) => h('option', { value: r, selected: r === 'viewer' }, roleOption(r))),
    ) as HTMLSelectElement;
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create token');
    const status = h('div', { class: 'form-status' });
    const fieldset = h(
      'fieldset',
      { class: 'form-grid' },
      field('Name', name, 'What uses it, so you know what to revoke later.'),
      field('Role', roleSel, 'At most your own role. Tokens do not expire: revoke one when it is no longer needed.'),
    );
    const form = h(
      'form',
      { class: 'card', 'aria-labelledby': 'add-token-title' },
      h('h2', { id: 'add-token-title' }, 'Create token'),
      fieldset,
      status,
      h('div', { class: 'form-actions' }, submit),
    );
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (!form.reportValidity()) return;
      status.replaceChildren();
      await busy([fieldset, submit], async () => {
        try {
          const created = await endpoints.createToken({ name: name.value.trim(), role: roleSel.value });
          if (ctx.signal.aborted) return;
          form.reset();
          message.replaceChildren();
          showCreated(created);
          void load();
        } catch (err) {
          if (!ctx.signal.aborted) clear(status, plainErrorBox(err));
        }
      });
    });
    return form;
  }

  /** The value, once: a copy button, a plain warning, and Done, which removes it from the page. */
  function showCreated(created: CreatedManagementToken): void {
    showSecretOnce(reveal, heading, {
      idPrefix: 'new-token',
      value: created.token,
      title: `New token “${created.name}” (${roleLabel(created.role)})`,
      warning:
        'Copy this token now. It will not be shown again: the gateway keeps only a fingerprint of it. If it is lost, revoke it and create another.',
      label: 'New management token',
      noun: 'token',
    });
  }

  void load();
}
