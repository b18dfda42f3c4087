import { endpoints, isAbortError, type ApiKey, type CreatedApiKey } from '../api';
import { busy, clear, confirmDialog, copyText, emptyState, errorBox, field, formatDate, h, loading, notice } from '../dom';
import type { ViewContext } from '../router';

export function renderKeys(root: HTMLElement, ctx: ViewContext): void {
  let keys: ApiKey[] | null = null;

  const heading = h('h1', { tabindex: '-1' }, 'API Keys');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const listArea = h('div', { class: 'list-area', 'aria-live': 'polite' });
  const message = h('div', { class: 'row-message' });
  // The one place a full key is ever shown: right after it was created.
  const reveal = h('div', { class: 'reveal-area' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h('p', { class: 'muted page-intro' }, 'Keys that clients use to call the gateway’s /v1 API.'),
    reveal,
    message,
    h('section', { 'aria-labelledby': 'keys-list-title' }, h('h2', { id: 'keys-list-title', class: 'visually-hidden' }, 'Key list'), listArea),
    renderCreateForm(),
  );

  async function load(quiet = false): Promise<void> {
    if (!quiet || keys === null) {
      clear(listArea, loading('Loading API keys…'));
      listArea.setAttribute('aria-busy', 'true');
    }
    refreshBtn.disabled = true;
    try {
      const list = await endpoints.listKeys(ctx.signal);
      if (ctx.signal.aborted) return;
      keys = list;
      renderList();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      listArea.removeAttribute('aria-busy');
      refreshBtn.disabled = false;
    }
  }

  function renderList(): void {
    const list = keys ?? [];
    if (list.length === 0) {
      clear(listArea, emptyState('No API keys yet — create one below', 'Clients send a key as “Authorization: Bearer <key>”.'));
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
          h('caption', { class: 'visually-hidden' }, `${list.length} API key${list.length === 1 ? '' : 's'}`),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Name', 'Key', 'Scopes', 'Created'].map((t) => h('th', { scope: 'col' }, t)),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
            ),
          ),
          h('tbody', null, list.map(renderRow)),
        ),
      ),
    );
  }

  function renderRow(k: ApiKey): HTMLTableRowElement {
    const label = k.name || k.id;
    const del = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Delete key ${label}` }, 'Delete');
    del.addEventListener('click', async () => {
      const yes = await confirmDialog({
        title: 'Delete API key?',
        message: `Delete the key “${label}”? Clients using it will get 401 errors. This cannot be undone.`,
        confirmLabel: 'Delete',
        danger: true,
      });
      if (!yes) {
        del.focus();
        return;
      }
      const ok = await busy(
        [del],
        async () => {
          try {
            await endpoints.deleteKey(k.id);
            return true;
          } catch (err) {
            if (!ctx.signal.aborted) clear(message, errorBox(err));
            return false;
          }
        },
        { button: del, label: 'Deleting…' },
      );
      if (ctx.signal.aborted) return;
      if (ok) {
        clear(message, notice(`Deleted key “${label}”.`, 'success'));
        heading.focus();
        await load(true);
      } else {
        del.focus();
      }
    });
    const scopes = Array.isArray(k.scopes) && k.scopes.length ? k.scopes : null;
    return h(
      'tr',
      null,
      h('td', null, h('div', { class: 'cell-main' }, label, k.isDefault ? [' ', h('span', { class: 'chip' }, 'default')] : null)),
      h('td', null, k.keyMasked ? h('code', { class: 'nowrap' }, k.keyMasked) : h('span', { class: 'muted' }, '—')),
      h('td', null, scopes ? scopes.map((s) => h('span', { class: 'chip' }, s)) : h('span', { class: 'muted' }, 'all')),
      h('td', null, formatDate(k.createdAt)),
      h('td', { class: 'actions' }, del),
    );
  }

  function showCreatedKey(created: CreatedApiKey): void {
    const input = h('input', {
      id: 'new-key-value',
      class: 'secret',
      readonly: true,
      spellcheck: 'false',
      autocomplete: 'off',
      'aria-describedby': 'new-key-warning',
    });
    input.value = created.key; // a property, not an attribute in the markup
    const copyBtn = h('button', { type: 'button', class: 'btn btn-primary' }, 'Copy');
    const copied = h('span', { class: 'copy-status', role: 'status' });
    const done = h('button', { type: 'button', class: 'btn' }, 'Done — I saved it');
    copyBtn.addEventListener('click', async () => {
      const ok = await copyText(input.value, input);
      copied.textContent = ok ? 'Copied.' : 'Could not copy: select the key and copy it yourself.';
    });
    input.addEventListener('focus', () => input.select());
    done.addEventListener('click', () => {
      reveal.replaceChildren(); // the key leaves the page for good
      heading.focus();
    });
    clear(
      reveal,
      h(
        'div',
        { class: 'card reveal', role: 'region', 'aria-labelledby': 'new-key-title' },
        h('h2', { id: 'new-key-title' }, `New key “${created.name || created.id}”`),
        h('p', { id: 'new-key-warning', class: 'warn-text' }, 'Copy this key now. It is shown only once — after you leave this page it cannot be shown again.'),
        h('div', { class: 'copy-row' }, h('label', { for: input.id, class: 'visually-hidden' }, 'New API key'), input, copyBtn),
        copied,
        h('div', { class: 'form-actions' }, done),
      ),
    );
    input.focus();
  }

  function renderCreateForm(): HTMLElement {
    const name = h('input', { id: 'key-name', name: 'name', required: true, autocomplete: 'off', maxlength: '100' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create key');
    const status = h('div', { class: 'form-status' });
    const fieldset = h('fieldset', { class: 'form-grid' }, field('Name', name, 'Who or what uses this key, e.g. “laptop” or “ci”.'));
    const form = h(
      'form',
      { class: 'card', 'aria-labelledby': 'create-key-title' },
      h('h2', { id: 'create-key-title' }, 'Create key'),
      fieldset,
      status,
      h('div', { class: 'form-actions' }, submit),
    );
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (!form.reportValidity()) return;
      status.replaceChildren();
      const outcome = await busy(
        [fieldset, submit],
        async (): Promise<{ created: CreatedApiKey } | { failure: unknown }> => {
          try {
            return { created: await endpoints.createKey(name.value.trim()) };
          } catch (err) {
            return { failure: err };
          }
        },
        { button: submit, label: 'Creating…' },
      );
      if (ctx.signal.aborted) return;
      if ('created' in outcome) {
        form.reset();
        message.replaceChildren();
        if (outcome.created && typeof outcome.created.key === 'string' && outcome.created.key) {
          showCreatedKey(outcome.created);
        } else {
          clear(message, notice('Key created, but the gateway did not return its value.', 'info'));
        }
        await load(true);
      } else {
        clear(status, errorBox(outcome.failure));
        name.focus();
      }
    });
    return form;
  }

  refreshBtn.addEventListener('click', () => void load());
  void load();
}
