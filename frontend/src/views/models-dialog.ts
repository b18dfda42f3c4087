// The Connections page's "Models" dialog: search a connection's model list,
// hide models from routing and /v1/models, and name aliases.

import { endpoints, type Connection } from '../api';
import { clear, errorBox, h, notice, openDialog } from '../dom';
import { gateWrites } from './role-gate';
import { filterModels, hiddenModels, knownModels, modelAliases } from '../lib/modelsearch';

/** Models listed before "and N more" (the search narrows the rest). */
const SHOWN = 200;

export function openModelsDialog(c: Connection, onSaved: (c: Connection) => void | Promise<void>): void {
  const label = c.name || c.provider;
  const names = knownModels(c);
  const hidden = new Set(hiddenModels(c));
  const aliases = modelAliases(c);

  const search = h('input', { id: 'models-search', type: 'search', autocomplete: 'off', spellcheck: 'false', placeholder: 'Search models', 'aria-label': 'Search models' });
  const count = h('p', { class: 'muted small', 'aria-live': 'polite', 'data-testid': 'models-count' });
  const list = h('ul', { class: 'model-manage-list', 'data-testid': 'model-manage-list' });
  const aliasList = h('ul', { class: 'model-manage-list', 'data-testid': 'alias-list' });
  const aliasName = h('input', { id: 'alias-name', autocomplete: 'off', spellcheck: 'false', placeholder: 'fast', 'aria-label': 'Alias' });
  const aliasTarget = h('input', { id: 'alias-model', autocomplete: 'off', spellcheck: 'false', list: 'alias-models', placeholder: 'model', 'aria-label': 'Model of the alias' });
  const aliasModels = h('datalist', { id: 'alias-models' }, names.map((n) => h('option', { value: n })));
  const addAlias = h('button', { type: 'button', class: 'btn btn-small' }, 'Add alias');
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const save = h('button', { type: 'button', class: 'btn btn-primary' }, 'Save');
  const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');

  function renderList(): void {
    const found = filterModels(names, search.value);
    const shown = found.slice(0, SHOWN);
    count.textContent = search.value.trim()
      ? `${found.length} of ${names.length} model${names.length === 1 ? '' : 's'} match · ${hidden.size} hidden`
      : `${names.length} model${names.length === 1 ? '' : 's'} · ${hidden.size} hidden`;
    clear(
      list,
      shown.length === 0 ? h('li', { class: 'muted' }, names.length ? 'No model matches.' : 'This connection lists no models yet (Refresh models).') : null,
      shown.map((m) => {
        const isHidden = hidden.has(m);
        const btn = h(
          'button',
          { type: 'button', class: 'btn btn-small', 'aria-pressed': String(isHidden), 'aria-label': `${isHidden ? 'Show' : 'Hide'} ${m}` },
          isHidden ? 'Show' : 'Hide',
        );
        btn.addEventListener('click', () => {
          if (hidden.has(m)) hidden.delete(m);
          else hidden.add(m);
          renderList();
          list.querySelector<HTMLElement>(`[aria-label="${CSS.escape(`${hidden.has(m) ? 'Show' : 'Hide'} ${m}`)}"]`)?.focus();
        });
        return h('li', { class: isHidden ? 'model-hidden' : '', 'data-model': m }, h('code', null, m), isHidden ? h('span', { class: 'badge badge-muted' }, 'hidden') : null, btn);
      }),
      found.length > shown.length ? h('li', { class: 'muted' }, `and ${found.length - shown.length} more — narrow the search`) : null,
    );
  }

  function renderAliases(): void {
    const entries = Object.entries(aliases).sort(([a], [b]) => a.localeCompare(b));
    clear(
      aliasList,
      entries.length === 0 ? h('li', { class: 'muted' }, 'No aliases.') : null,
      entries.map(([a, m]) => {
        const rm = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Remove alias ${a}` }, 'Remove');
        rm.addEventListener('click', () => {
          delete aliases[a];
          renderAliases();
        });
        return h('li', null, h('code', null, a), ' → ', h('code', null, m), rm);
      }),
    );
  }

  addAlias.addEventListener('click', () => {
    const a = aliasName.value.trim();
    const m = aliasTarget.value.trim();
    if (!a || !m) {
      clear(status, notice('Type an alias and the model it names.', 'info'));
      return;
    }
    aliases[a] = m;
    aliasName.value = '';
    aliasTarget.value = '';
    status.replaceChildren();
    renderAliases();
    aliasName.focus();
  });
  search.addEventListener('input', renderList);

  gateWrites([[save, 'PATCH /api/providers/{id}']]);
  save.addEventListener('click', async () => {
    save.disabled = true;
    clear(status, notice('Saving…', 'info'));
    try {
      const res = await endpoints.manageModels(c.id, { hiddenModels: names.filter((n) => hidden.has(n)).concat([...hidden].filter((n) => !names.includes(n))), modelAliases: { ...aliases } });
      handle.close();
      if (res.connection) await onSaved(res.connection);
    } catch (err) {
      clear(status, errorBox(err));
    } finally {
      save.disabled = false;
    }
  });
  cancel.addEventListener('click', () => handle.close());

  renderList();
  renderAliases();
  const handle = openDialog({
    title: `Models of ${label}`,
    wide: true,
    initialFocus: search,
    content: h(
      'div',
      { class: 'models-dialog', 'data-testid': 'models-dialog' },
      h('p', { class: 'muted small' }, 'A hidden model is left out of /v1/models and never sent to this connection; an alias is listed and routes to its model here.'),
      search,
      count,
      list,
      h('h3', null, 'Aliases'),
      aliasList,
      h('div', { class: 'alias-add' }, aliasName, aliasTarget, aliasModels, addAlias),
      status,
      h('div', { class: 'form-actions' }, save, cancel),
    ),
  });
}
