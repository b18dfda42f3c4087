import { endpoints, isAbortError, type Connection, type ConnectionUpdate, type ImportSource, type NewConnection, type TestResult, type CheckStep } from '../api';
import { plainCode } from '../lib/words';
import {
  badge,
  busy,
  clear,
  confirmDialog,
  emptyState,
  errorBox,
  field,
  formatTime,
  h,
  loading,
  notice,
  openDialog,
  showFieldError,
} from '../dom';
import { describeLive, formatModelCaps, parseModelCaps, sameCaps } from '../lib/concurrency';
import { formatCountdown, parseList } from '../lib/format';
import { applyConnectionEvent, connectionState } from '../lib/health';
import { connectionBadge, healthStore, instant } from '../lib/healthmodel';
import { fixButtons } from './fix-buttons';
import { showRefusal } from './refusal';
import { allowedOr, gateWrites } from './role-gate';
import { upstreamWords } from '../lib/plain';
import { live } from '../live';
import type { ViewContext } from '../router';
import { reimportButton, renderImportCard, subscriptionSummary } from './subscription-parts';
import { renderLoginCards } from './login-flow';
import { formSignature, renderProviderForm, type ProviderForm } from './provider-form';
import { openModelsDialog } from './models-dialog';
import { openPricingFromParams, pricesButton } from './pricing';
import { hiddenModels, modelAliases } from '../lib/modelsearch';
import { describePrefillProbe, modelPrefillOf, prefillTag } from '../lib/prefill';
import { addableProviders, findProvider, needsBaseUrl, summaryLine, type CatalogProvider } from '../lib/provider-form';

const STEP_NAME: Record<string, string> = { reach: 'reach', auth: 'key', models: 'model list', completion: 'one completion' };

/** "reach ✓ · key ✗ 401: Incorrect API key · …": each step of a credential check with the upstream's words. */
export function describeSteps(steps: CheckStep[]): string {
  return steps
    .map((s) => {
      const name = STEP_NAME[s.step] ?? s.step;
      if (s.skipped) return `${name}: not tried`;
      if (s.ok) return `${name} ✓`;
      return `${name} ✗${s.status ? ` ${s.status}` : ''}${s.message ? `: ${s.message}` : ''}`;
    })
    .join(' · ');
}

function describeTest(r: TestResult): { ok: boolean; text: string } {
  if (r.steps?.length) {
    const head = r.ok ? (r.latencyMs != null ? `Test passed · ${Math.round(r.latencyMs)} ms` : 'Test passed') : r.rejected ? 'The provider rejected this key' : 'Test failed';
    const prefill = describePrefillProbe(r.prefill);
    return { ok: r.ok, text: `${head} — ${describeSteps(r.steps)}${prefill ? ` · ${prefill}` : ''}` };
  }
  if (r.ok) {
    const n = Array.isArray(r.models) ? r.models.length : 0;
    const models = n ? ` · ${n} model${n === 1 ? '' : 's'}` : '';
    return { ok: true, text: (r.latencyMs != null ? `Test passed · ${Math.round(r.latencyMs)} ms` : 'Test passed') + models };
  }
  const e = r.error;
  const msg = typeof e === 'string' ? e : e?.message || 'Test failed';
  return { ok: false, text: `Test failed: ${msg}` };
}

/** The names a connection serves: its own list, then the discovered one. */
export function servedModels(c: Connection): string[] {
  const served = Array.isArray(c.servedModels) ? c.servedModels : Array.isArray(c.models) ? c.models : [];
  return served.map(String);
}

/** Models shown in a row before “and N more”. */
const MODELS_SHOWN = 40;

/** The row's model list: a disclosure with the names and where they came from. */
function renderModels(c: Connection): HTMLElement | null {
  const names = servedModels(c);
  const source =
    c.modelsSource === 'catalog' ? 'catalogue default (the upstream did not list its models)' : c.modelsSource === 'upstream' ? 'listed by the upstream' : '';
  if (names.length === 0 && !c.modelsError && hiddenModels(c).length === 0) return null;
  const shown = names.slice(0, MODELS_SHOWN);
  return h(
    'details',
    { class: 'models', 'data-testid': 'models' },
    h('summary', { class: 'muted small' }, `${names.length} model${names.length === 1 ? '' : 's'}`),
    source ? h('small', { class: 'muted block' }, source) : null,
    c.modelsError ? h('small', { class: 'muted block', title: c.modelsError }, `Last discovery: ${c.modelsError}`) : null,
    hiddenModels(c).length || Object.keys(modelAliases(c)).length
      ? h('small', { class: 'muted block', 'data-testid': 'models-managed' }, describeManaged(c))
      : null,
    shown.length
      ? h(
          'ul',
          { class: 'model-names' },
          shown.map((m) => h('li', null, h('code', null, m), prefillTag(modelPrefillOf(c, m)))),
          names.length > shown.length ? h('li', { class: 'muted' }, `and ${names.length - shown.length} more`) : null,
        )
      : null,
  );
}

/** "2 hidden · aliases: fast → gpt-4o": what the Models dialog set on a connection. */
export function describeManaged(c: Connection): string {
  const parts: string[] = [];
  const hidden = hiddenModels(c);
  if (hidden.length) parts.push(`${hidden.length} hidden`);
  const aliases = Object.entries(modelAliases(c)).sort(([a], [b]) => a.localeCompare(b));
  if (aliases.length) parts.push(`aliases: ${aliases.map(([a, m]) => `${a} → ${m}`).join(', ')}`);
  return parts.join(' · ');
}

export function sortConnections(list: Connection[]): Connection[] {
  return [...list].sort(
    (a, b) => (a.priority ?? Number.MAX_SAFE_INTEGER) - (b.priority ?? Number.MAX_SAFE_INTEGER) || (a.name || '').localeCompare(b.name || ''),
  );
}

export function renderConnections(root: HTMLElement, ctx: ViewContext): () => void {
  const testResults = new Map<string, { ok: boolean; text: string }>();
  let connections: Connection[] | null = null;
  const rows = new Map<string, HTMLTableRowElement>();
  // The catalogue: every provider's connection form (keyField, dataFields)
  // and what its rows show; [] until it has loaded (or when it cannot).
  let catalog: CatalogProvider[] = [];
  const catalogReady = endpoints
    .providerCatalog(ctx.signal)
    .then((list) => {
      catalog = list;
      if (connections && !ctx.signal.aborted) renderList();
      return list;
    })
    .catch(() => [] as CatalogProvider[]);
  // The CLI logins an import reads (GET /api/providers/import): the import
  // card's choices, and which expired rows offer "Re-import".
  let importSources: ImportSource[] = [];
  const importsReady = endpoints
    .listImports(ctx.signal)
    .then((list) => {
      importSources = list;
      if (connections && !ctx.signal.aborted) renderList();
      return list;
    })
    .catch(() => [] as ImportSource[]);

  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const listArea = h('div', { class: 'list-area' });
  const rowMessage = h('div', { class: 'row-message', 'aria-live': 'polite' });
  const heading = h('h1', { tabindex: '-1' }, 'Connections');

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h('p', { class: 'muted page-intro' }, 'Upstream providers the gateway routes requests to, tried in priority order (lowest first). Status updates live.'),
    rowMessage,
    h('section', { 'aria-labelledby': 'connections-list-title' }, h('h2', { id: 'connections-list-title', class: 'visually-hidden' }, 'Connection list'), listArea),
    allowedOr('POST /api/providers', () => renderAddForm(ctx, catalogReady, async (created, warning) => {
      // A rejected key is never announced as a plain success.
      clear(
        rowMessage,
        warning
          ? notice(`Added connection “${created.name || created.provider}”, but ${warning}. ${addFixHint(warning)}`, 'info')
          : notice(`Added connection “${created.name || created.provider}”.`, 'success'),
      );
      await load(true);
    }), 'Adding a connection'),
    allowedOr('POST /api/providers/import', () => renderImportCard(ctx.signal, importsReady, async () => {
      await load(true);
    })),
    allowedOr('POST /api/providers/login/{provider}', () => renderLoginCards(ctx.signal, async () => {
      await load(true);
    })),
  );

  async function load(quiet = false, focusKey?: string): Promise<void> {
    if (!quiet || connections === null) {
      clear(listArea, loading('Loading connections…'));
      listArea.setAttribute('aria-busy', 'true');
    }
    refreshBtn.disabled = true;
    try {
      const list = await endpoints.listConnections(ctx.signal);
      if (ctx.signal.aborted) return;
      connections = sortConnections(list);
      renderList(focusKey);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      listArea.removeAttribute('aria-busy');
      refreshBtn.disabled = false;
    }
  }

  const activeFocusKey = () => (document.activeElement as HTMLElement | null)?.dataset?.['focusKey'];
  const restoreFocus = (key: string | undefined) => {
    if (!key) return;
    const find = (k: string) => listArea.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(k)}"]`);
    // A button that went away (e.g. "Clear cooldown" once cleared) hands focus to the row's Test button.
    (find(key) ?? find(`${key.slice(0, key.lastIndexOf(':'))}:test`))?.focus();
  };

  function renderList(restore?: string): void {
    // Keep keyboard focus on the same control across a re-render.
    const focusKey = restore ?? activeFocusKey();
    const list = connections ?? [];
    rows.clear();
    if (list.length === 0) {
      clear(listArea, emptyState('No connections yet — add one below', 'Add an API key for a provider and the gateway starts routing to it.'));
      return;
    }
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table', 'data-testid': 'connections-table' },
          h('caption', { class: 'visually-hidden' }, `${list.length} connection${list.length === 1 ? '' : 's'}, by priority`),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Name', 'Provider', 'Priority', 'Status', 'Last error', 'API key'].map((t) => h('th', { scope: 'col' }, t)),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
            ),
          ),
          h(
            'tbody',
            null,
            list.map((c) => {
              const tr = renderRow(c);
              rows.set(c.id, tr);
              return tr;
            }),
          ),
        ),
      ),
    );
    restoreFocus(focusKey);
  }

  /** Re-renders one row in place (live updates, countdown end) keeping focus. */
  function replaceRow(id: string): void {
    const c = connections?.find((x) => x.id === id);
    const old = rows.get(id);
    if (!c || !old) return;
    const focusKey = old.contains(document.activeElement) ? activeFocusKey() : undefined;
    const tr = renderRow(c);
    old.replaceWith(tr);
    rows.set(id, tr);
    restoreFocus(focusKey);
  }

  function renderRow(c: Connection): HTMLTableRowElement {
    const state = connectionState(c);
    // The gateway's health model decides the badge (an OPEN breaker, locked
    // models or a lease are not "healthy"); the row's own fields are the fallback.
    const model = healthStore.connection(c.id);
    const shown = connectionBadge(c, model);
    const modelUntil = instant(model?.until);
    const test = testResults.get(c.id);
    const label = c.name || c.provider;
    const fk = (what: string) => `${c.id}:${what}`;

    const editBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-focus-key': fk('edit'), 'aria-label': `Edit ${label}` }, 'Edit');
    const toggleBtn = h(
      'button',
      { type: 'button', class: 'btn btn-small', 'data-focus-key': fk('toggle'), 'aria-label': `${c.isActive ? 'Disable' : 'Enable'} ${label}` },
      c.isActive ? 'Disable' : 'Enable',
    );
    const testBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-focus-key': fk('test'), 'aria-label': `Test ${label}` }, 'Test');
    const modelsBtn = h(
      'button',
      { type: 'button', class: 'btn btn-small', 'data-focus-key': fk('models'), 'aria-label': `Refresh models of ${label}` },
      'Refresh models',
    );
    const manageBtn = h(
      'button',
      { type: 'button', class: 'btn btn-small', 'data-focus-key': fk('manage'), 'aria-label': `Manage models of ${label}` },
      'Models',
    );
    manageBtn.addEventListener('click', () =>
      openModelsDialog(c, async (saved) => {
        const hiddenN = Array.isArray(saved['hiddenModels']) ? (saved['hiddenModels'] as unknown[]).length : 0;
        clear(rowMessage, notice(`Saved the models of “${label}”: ${hiddenN} hidden.`, 'success'));
        await load(true, fk('manage'));
      }),
    );
    // The health model's fixes, as the same buttons as on the Overview (the
    // row's own Edit and Enable/Disable stand for edit_connection and enable);
    // before the first health report, the row's own cooldown is the fallback.
    const modelFixes = model
      ? fixButtons(
          { id: c.id, name: label, state: model.state, providerId: model.provider, locks: model.locks ?? [], ...(model.leaseId ? { leaseId: model.leaseId } : {}) },
          model.fixes,
          { signal: ctx.signal, message: rowMessage, onDone: () => load(true, fk('test')), skip: ['edit_connection', 'enable', 'clear_cooldown'] },
        )
      : [];
    // clear_cooldown is the row's own Clear cooldown button (it says what a
    // clear skipped), shown when the health model offers that fix.
    const canClear = model
      ? (model.fixes ?? []).includes('clear_cooldown')
      : state.kind === 'cooling' || (c.isActive === false && connectionState({ ...c, isActive: true }).kind === 'cooling');
    const clearBtn = canClear
      ? h('button', { type: 'button', class: 'btn btn-small btn-warn', 'data-focus-key': fk('clear'), 'aria-label': `Clear cooldown of ${label}` }, 'Clear cooldown')
      : null;
    const deleteBtn = h(
      'button',
      { type: 'button', class: 'btn btn-small btn-danger', 'data-focus-key': fk('delete'), 'aria-label': `Delete ${label}` },
      'Delete',
    );
    const reimportBtn = reimportButton(c, importSources, async (message, ok) => {
      if (ctx.signal.aborted) return;
      clear(rowMessage, ok ? notice(message, 'success') : errorBox(new Error(message)));
      await load(true, fk('test'));
    });
    for (const b of modelFixes) b.dataset['focusKey'] = fk(`fix-${b.dataset['fix'] ?? ''}`);
    // Prices: everyone may read them; only an admin saves (the dialog says so).
    const pricesBtn = pricesButton(c, async (n) => {
      clear(rowMessage, notice(`Saved the prices of “${label}”: ${n} model${n === 1 ? '' : 's'} priced.`, 'success'));
      await load(true, fk('test'));
    });
    const buttons = [editBtn, toggleBtn, testBtn, modelsBtn, manageBtn, pricesBtn, ...(clearBtn ? [clearBtn] : []), ...(reimportBtn ? [reimportBtn] : []), deleteBtn];
    // A viewer (or an operator) sees what it may not do disabled, with why.
    gateWrites([[editBtn, 'PUT /api/providers/{id}'], [toggleBtn, 'PUT /api/providers/{id}'], [testBtn, 'POST /api/providers/{id}/test'], [modelsBtn, 'POST /api/providers/{id}/models/refresh'], [manageBtn, 'PATCH /api/providers/{id}'], [clearBtn, 'POST /api/resilience/cooldowns'], [reimportBtn, 'POST /api/providers/import'], [deleteBtn, 'DELETE /api/providers/{id}']]);
    modelsBtn.addEventListener('click', () =>
      void busy(buttons, async () => {
        try {
          const res = await endpoints.refreshModels(c.id);
          if (ctx.signal.aborted) return;
          const n = res?.connection ? servedModels(res.connection).length : 0;
          if (res?.ok) clear(rowMessage, notice(`“${label}” serves ${n} model${n === 1 ? '' : 's'}.`, 'success'));
          else clear(rowMessage, notice(`The upstream of “${label}” did not list its models: ${res?.error?.message ?? 'unknown error'}. ${n} model${n === 1 ? '' : 's'} kept.`, 'info'));
          await load(true, fk('models'));
        } catch (err) {
          if (!ctx.signal.aborted) clear(rowMessage, errorBox(err));
        }
      }, { button: modelsBtn, label: 'Refreshing…' }),
    );

    editBtn.addEventListener('click', () => openEditDialog(c));

    toggleBtn.addEventListener('click', () =>
      void busy(buttons, async () => {
        try {
          await endpoints.updateConnection(c.id, { isActive: !c.isActive });
          rowMessage.replaceChildren();
          await load(true, fk('toggle'));
        } catch (err) {
          if (!ctx.signal.aborted) clear(rowMessage, errorBox(err));
        }
      }, { button: toggleBtn, label: c.isActive ? 'Disabling…' : 'Enabling…' }),
    );

    testBtn.addEventListener('click', () =>
      void busy(buttons, async () => {
        try {
          const result = await endpoints.testConnection(c.id);
          testResults.set(c.id, describeTest(result));
        } catch (err) {
          if (ctx.signal.aborted) return;
          const msg = err instanceof Error ? err.message : String(err);
          testResults.set(c.id, { ok: false, text: `Test failed: ${msg}` });
        }
        if (!ctx.signal.aborted) await load(true, fk('test')); // testStatus may have changed
      }, { button: testBtn, label: 'Testing…' }),
    );

    clearBtn?.addEventListener('click', () =>
      void busy(buttons, async () => {
        try {
          const res = await endpoints.clearCooldowns([c.id]);
          if (ctx.signal.aborted) return;
          if (res?.skippedTerminal) {
            clear(rowMessage, notice(`“${label}” is out of service (not a cooldown); new credentials or a passing Test clear that.`, 'info'));
          } else {
            clear(rowMessage, notice(`Cleared the cooldown of “${label}”.`, 'success'));
          }
          // The gateway also sends a live "connection" event; reload in case the stream is down.
          await load(true, fk('test'));
        } catch (err) {
          if (!ctx.signal.aborted) clear(rowMessage, errorBox(err));
        }
      }, { button: clearBtn, label: 'Clearing…' }),
    );

    deleteBtn.addEventListener('click', async () => {
      const yes = await confirmDialog({
        title: 'Delete connection?',
        message: `Delete “${label}” (${c.provider})? Requests will no longer be routed to it. This cannot be undone.`,
        confirmLabel: 'Delete',
        danger: true,
      });
      if (!yes) {
        deleteBtn.focus();
        return;
      }
      await busy(buttons, async () => {
        try {
          await endpoints.deleteConnection(c.id);
          testResults.delete(c.id);
          clear(rowMessage, notice(`Deleted connection “${label}”.`, 'success'));
          heading.focus();
          await load(true);
        } catch (err) {
          if (!ctx.signal.aborted) clear(rowMessage, errorBox(err));
        }
      }, { button: deleteBtn, label: 'Deleting…' });
    });

    // The stable code when there is one (its sentence, with the code as a tag), else the kind.
    const errorType = (c.errorCode != null && c.errorCode !== '' ? String(c.errorCode) : '') || c.lastErrorType || '';
    let until = state.until ?? (c.isActive === false ? connectionState({ ...c, isActive: true }).until : undefined);
    if (model && model.state !== 'serving') until = modelUntil && modelUntil > Date.now() ? new Date(modelUntil) : undefined;
    return h(
      'tr',
      { class: c.isActive ? null : 'row-inactive', 'data-id': c.id, 'data-state': state.kind, 'data-health': model?.state ?? null },
      h(
        'td',
        null,
        h('div', { class: 'cell-main' }, label),
        c.prefix ? h('small', { class: 'muted' }, `prefix ${c.prefix}`) : null,
        renderModels(c),
        accountSummary(c, findProvider(catalog, c.provider)),
      ),
      h('td', null, h('span', { title: c.provider, class: 'provider-name' }, model?.providerName || c.provider)),
      h('td', { class: 'num' }, c.priority ?? '—'),
      h(
        'td',
        { class: 'status-cell' },
        h('span', { 'data-testid': 'status-badge' }, badge(shown.label, shown.tone, model?.reason || undefined)),
        model?.reason && model.state !== 'serving' ? h('small', { class: 'block muted' }, model.reason) : null,
        until
          ? h(
              'small',
              { class: 'block countdown', title: `until ${formatTime(until)}` },
              h('span', { 'data-until': String(until.getTime()), 'data-testid': 'countdown' }, formatCountdown(until.getTime() - Date.now())),
              ' left',
              c.backoffLevel ? ` · backoff ${c.backoffLevel}` : '',
            )
          : null,
        test ? h('small', { class: `block test-${test.ok ? 'ok' : 'bad'}`, role: 'status' }, test.text) : null,
        h('small', { class: 'block muted', 'data-testid': 'live-limits', 'data-live-id': c.id }, describeLive(c.live)),
        subscriptionSummary(c),
      ),
      h(
        'td',
        null,
        errorType ? plainCode(errorType, 'error-type') : h('span', { class: 'muted' }, '—'),
        c.lastError ? h('small', { class: 'muted block truncate' }, upstreamWords(c.lastError)) : null,
      ),
      h('td', null, (c.apiKeyMasked || c['accessTokenMasked']) ? h('code', { class: 'nowrap' }, String(c.apiKeyMasked || c['accessTokenMasked'])) : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'actions' }, h('div', { class: 'btn-row' }, ...modelFixes, ...buttons)),
    );
  }

  // ------------------------------------------------------------ edit dialog

  function openEditDialog(c: Connection): void {
    const label = c.name || c.provider;
    const id = (k: string) => `edit-${k}`;
    const name = h('input', { id: id('name'), name: 'name', required: true, maxlength: '100', autocomplete: 'off' });
    name.value = c.name ?? '';
    const baseUrl = h('input', { id: id('baseurl'), name: 'baseUrl', type: 'url', autocomplete: 'off', spellcheck: 'false', placeholder: 'https://api.example.com/v1' });
    baseUrl.value = c.baseUrl ?? '';
    const entry = findProvider(catalog, c.provider);
    baseUrl.required = needsBaseUrl(entry);
    const prefix = h('input', { id: id('prefix'), name: 'prefix', autocomplete: 'off', spellcheck: 'false', maxlength: '32' });
    prefix.value = c.prefix ?? '';
    const priority = h('input', { id: id('priority'), name: 'priority', type: 'number', min: '0', step: '1', inputmode: 'numeric' });
    priority.value = c.priority != null ? String(c.priority) : '';
    const maxConcurrent = h('input', { id: id('maxconcurrent'), name: 'maxConcurrent', type: 'number', min: '0', step: '1', inputmode: 'numeric' });
    maxConcurrent.value = c.maxConcurrent != null ? String(c.maxConcurrent) : '';
    const originalCaps = (c.rateLimitOverrides ?? {})['modelConcurrency'];
    const modelCaps = h('textarea', { id: id('modelconcurrency'), name: 'modelConcurrency', rows: '3', spellcheck: 'false', placeholder: 'glm-5=1\nglm-4.7=3' });
    modelCaps.value = formatModelCaps(originalCaps);
    const models = h('input', { id: id('models'), name: 'models', autocomplete: 'off', spellcheck: 'false' });
    const originalModels = Array.isArray(c.models) ? c.models.map(String) : [];
    models.value = originalModels.join(', ');
    // The provider's own part, from its schema: the key (write-only: never
    // prefilled, sent only when something is typed) and its fields.
    const pform = renderProviderForm(entry, { mode: 'edit', idPrefix: 'edit', connection: c });
    const status = h('div', { class: 'form-status' });
    const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save changes');
    const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
    const fieldset = h(
      'fieldset',
      { class: 'form-grid form-grid-2' },
      field('Name', name),
      field('Base URL', baseUrl, needsBaseUrl(entry) ? 'Required for this provider.' : 'Optional; overrides the provider’s URL.'),
      field('Prefix', prefix, 'Optional: “wall” makes wall/<model> reach this connection only.'),
      field('Priority', priority, 'Lower numbers are tried first.'),
      field('Max concurrent', maxConcurrent, '0 or empty = no limit. Excess requests wait in a local queue.'),
      field('Per-model concurrency', modelCaps, 'One model=cap per line, exact upstream model id (glm-5, not zai/glm-5). Empty = no model cap.'),
      field('Models', models, 'Your own names, comma separated, e.g. gpt-4o, gpt-4o-mini; served besides the ones the upstream lists (“Refresh models”).'),
    );
    const form = h('form', { class: 'dialog-form', novalidate: true }, h('p', { class: 'muted small' }, `${c.provider} · ${c.id}`), fieldset, pform.element, status, h('div', { class: 'dialog-actions' }, cancel, save));
    gateWrites([[save, 'PUT /api/providers/{id}']]); // a link (?edit=) opens it for any role
    const controls: Record<string, HTMLInputElement> = {
      name, baseUrl, prefix, priority, maxConcurrent, models,
      modelConcurrency: modelCaps as unknown as HTMLInputElement,
      rateLimitOverrides: modelCaps as unknown as HTMLInputElement,
    };

    const handle = openDialog({ title: `Edit “${label}”`, content: form, initialFocus: name });
    cancel.addEventListener('click', handle.close);

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      for (const el of Object.values(controls)) showFieldError(el, null);
      pform.clearErrors();
      status.replaceChildren();
      const body: ConnectionUpdate = {};
      const errors: Array<[HTMLInputElement, string]> = [];
      const nameV = name.value.trim();
      if (!nameV) errors.push([name, 'Enter a name.']);
      else if (nameV !== (c.name ?? '')) body.name = nameV;
      const urlV = baseUrl.value.trim();
      if (urlV && !/^https?:\/\/[^\s/]+/i.test(urlV)) errors.push([baseUrl, 'Enter an http(s) URL such as https://api.example.com/v1.']);
      else if (!urlV && baseUrl.required) errors.push([baseUrl, 'This provider needs a base URL.']);
      else if (urlV !== (c.baseUrl ?? '')) body.baseUrl = urlV;
      const prefixV = prefix.value.trim().toLowerCase();
      if (prefixV && !/^[a-z0-9][a-z0-9_-]{0,31}$/.test(prefixV)) errors.push([prefix, 'Use 1–32 lowercase letters, digits, “-” or “_”.']);
      else if (prefixV !== (c.prefix ?? '')) body.prefix = prefixV;
      const intField = (el: HTMLInputElement, current: number | null | undefined, max: number, set: (n: number) => void, emptyAs?: number) => {
        const t = el.value.trim();
        if (t === '') {
          if (emptyAs !== undefined && (current ?? emptyAs) !== emptyAs) set(emptyAs);
          return;
        }
        if (!/^\d+$/.test(t) || Number(t) > max) {
          errors.push([el, `Enter a whole number from 0 to ${max}.`]);
          return;
        }
        if (Number(t) !== (current ?? (emptyAs ?? -1))) set(Number(t));
      };
      intField(priority, c.priority, 1_000_000, (n) => (body.priority = n));
      intField(maxConcurrent, c.maxConcurrent, 10_000, (n) => (body.maxConcurrent = n), 0);
      const parsedCaps = parseModelCaps(modelCaps.value);
      if (parsedCaps.errors.length) errors.push([modelCaps as unknown as HTMLInputElement, parsedCaps.errors.join('; ')]);
      else if (!sameCaps(parsedCaps.caps, originalCaps)) body.modelConcurrency = Object.keys(parsedCaps.caps).length ? parsedCaps.caps : null;
      const modelList = parseList(models.value);
      if (JSON.stringify(modelList) !== JSON.stringify(originalModels)) body.models = modelList;
      // The provider's part: its edits on top of the stored object.
      const own = await pform.value();
      for (const e of own.errors) {
        const el = pform.control(e.field);
        if (el) errors.push([el as HTMLInputElement, e.message]);
      }
      if (own.apiKey) body.apiKey = own.apiKey;
      if (own.providerSpecificData) body.providerSpecificData = own.providerSpecificData;
      // A new key or base URL is checked with the upstream when it is saved.
      const newSecret = (entry?.dataFields ?? []).some((f) => f.secret && own.providerSpecificData && f.name in own.providerSpecificData);
      if (body.apiKey !== undefined || body.baseUrl !== undefined || newSecret) body.verify = true;

      if (errors.length) {
        for (const [el, msg] of errors) showFieldError(el, msg);
        errors[0]?.[0].focus();
        return;
      }
      if (Object.keys(body).length === 0) {
        clear(status, notice('Nothing changed.', 'info'));
        return;
      }
      const outcome = await busy([fieldset, save, cancel], async () => {
        try {
          return { ok: await endpoints.updateConnection(c.id, body) };
        } catch (err) {
          return { err };
        }
      }, { button: save, label: 'Saving…' });
      if (ctx.signal.aborted) return handle.close();
      if ('err' in outcome) {
        showRefusal(outcome.err, status, (param) => controls[param] ?? pform.controlForParam(param))?.focus();
        return;
      }
      handle.close();
      const warning = outcome.ok?.warning;
      clear(rowMessage, warning ? notice(`Saved “${body.name ?? label}”, but ${warning}.`, 'info') : notice(`Saved “${body.name ?? label}”.`, 'success'));
      await load(true, `${c.id}:edit`);
    });
  }

  // ------------------------------------------------------------ live updates

  const unsubscribe = live.subscribe('connection', (ev) => {
    if (!connections) return;
    const i = connections.findIndex((c) => c.id === ev.data.id);
    if (i < 0) {
      void load(true); // a connection this page has not seen (added elsewhere)
      return;
    }
    connections[i] = applyConnectionEvent(connections[i]!, ev.data);
    replaceRow(ev.data.id);
  });

  // Imports, refreshes and usage wall changes: refetch (quota meters, lane state).
  const unsubscribeSub = live.subscribe('subscription', () => void load(true));

  // Countdowns tick every second; a lapsed cooldown flips its row back to healthy.
  const ticker = window.setInterval(() => {
    const now = Date.now();
    for (const el of listArea.querySelectorAll<HTMLElement>('[data-until]')) {
      const left = Number(el.dataset['until']) - now;
      if (left <= 0) {
        const id = el.closest('tr')?.dataset['id'];
        if (id) replaceRow(id);
      } else {
        el.textContent = formatCountdown(left);
      }
    }
  }, 1000);

  // In-flight / queued / cap change with every request: poll them while the page is open.
  const pollLive = async () => {
    if (!connections || document.hidden) return;
    try {
      const res = await endpoints.rateLimits(ctx.signal);
      for (const l of res.connections ?? []) {
        const c = connections.find((x) => x.id === l.connectionId);
        if (c) c.live = l;
        const el = listArea.querySelector<HTMLElement>(`[data-live-id="${CSS.escape(l.connectionId)}"]`);
        if (el) el.textContent = describeLive(l);
      }
    } catch {
      // the next tick retries; the page's own load shows errors
    }
  };
  const livePoll = window.setInterval(() => void pollLive(), 2000);

  // The health model changed (a breaker, a lock, a lease): re-badge the rows.
  let lastSig = '';
  const unsubscribeHealth = healthStore.subscribe((r) => {
    const sig = (r.connections ?? []).map((x) => `${x.id}=${x.state}@${x.until ?? ''}`).join(',');
    if (sig === lastSig || !connections) return;
    lastSig = sig;
    for (const c of connections) replaceRow(c.id);
  });

  refreshBtn.addEventListener('click', () => void load());
  void Promise.all([load(), catalogReady]).then(() => {
    // #/connections?edit=<id> (the Overview's "Open connection") opens its dialog.
    const id = ctx.params.get('edit');
    const c = id ? connections?.find((x) => x.id === id) : undefined;
    // #/connections?price=<id>|auto&model=<m> (the MODEL_PRICE_UNKNOWN fix) opens the pricing editor.
    if (!c && !ctx.signal.aborted && openPricingFromParams(ctx.params, connections ?? [], (n, p) => {
      clear(rowMessage, notice(`Saved the prices of “${p.name || p.provider}”: ${n} model${n === 1 ? '' : 's'} priced.`, 'success'));
      void load(true);
    })) return;
    if (c && !ctx.signal.aborted) {
      openEditDialog(c);
      // "Replace key" (the health model's replace_key fix) lands on the key field.
      // "Fix base URL" / "Check address" land on the base URL field, "Replace key" on the key.
      const field = ctx.params.get('field');
      if (field === 'apiKey') (document.getElementById('edit-apikey') ?? document.querySelector<HTMLElement>('[data-sealed-as="apiKey"]'))?.focus();
      else if (field === 'baseUrl') document.getElementById('edit-baseurl')?.focus();
    }
  });
  return () => {
    unsubscribeHealth();
    unsubscribe();
    unsubscribeSub();
    window.clearInterval(ticker);
    window.clearInterval(livePoll);
  };
}

/** The row's account line (whose login, which project): from the provider's schema (summary fields). */
function accountSummary(c: Connection, p: CatalogProvider | undefined): HTMLElement | null {
  const line = summaryLine(c, p);
  return line ? h('small', { class: 'block muted truncate', 'data-testid': 'account', title: line }, line) : null;
}

/** The fix an Add's failed check calls for: a new key, or a new base URL (a 404, nothing answering). */
export function addFixHint(warning: string): string {
  return warning.startsWith('the provider rejected this key')
    ? 'Replace the key (Edit) to put it in service.'
    : 'Edit its base URL to put it in service.';
}

function renderAddForm(
  ctx: ViewContext,
  catalogReady: Promise<CatalogProvider[]>,
  onCreated: (c: Connection, warning?: string) => Promise<void>,
): HTMLElement {
  let catalog: CatalogProvider[] = [];
  const datalist = h('datalist', { id: 'provider-options' });
  const provider = h('input', { id: 'conn-provider', name: 'provider', list: datalist.id, required: true, autocomplete: 'off', spellcheck: 'false' });
  const name = h('input', { id: 'conn-name', name: 'name', autocomplete: 'off' });
  const baseUrl = h('input', { id: 'conn-baseurl', name: 'baseUrl', type: 'url', placeholder: 'https://api.example.com/v1', autocomplete: 'off', spellcheck: 'false' });
  const prefix = h('input', { id: 'conn-prefix', name: 'prefix', autocomplete: 'off', spellcheck: 'false' });
  const priority = h('input', { id: 'conn-priority', name: 'priority', type: 'number', step: '1', min: '0', inputmode: 'numeric' });
  const maxConcurrent = h('input', { id: 'conn-maxconcurrent', name: 'maxConcurrent', type: 'number', step: '1', min: '0', inputmode: 'numeric' });
  const models = h('input', { id: 'conn-models', name: 'models', autocomplete: 'off', spellcheck: 'false', placeholder: 'gpt-4o, gpt-4o-mini' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add connection');
  const status = h('div', { class: 'form-status' });
  const head = h(
    'fieldset',
    { class: 'form-grid' },
    field('Provider', provider, 'Pick from the list or type a provider id.'),
    field('Name', name, 'Optional label, e.g. “work account”; defaults to the provider.'),
  );
  // The provider's own part (its key and fields, from its schema) goes here.
  const slot = h('div', { class: 'provider-slot' });
  const rest = h(
    'fieldset',
    { class: 'form-grid' },
    field('Base URL', baseUrl, 'Optional; required for providers without a fixed endpoint (*-compatible, Azure OpenAI, …).'),
    field('Models', models, 'Optional, comma separated. Left empty, the gateway asks the upstream which models it serves.'),
    field('Prefix', prefix, 'Optional model prefix, e.g. “oa” for oa/gpt-4o.'),
    field('Priority', priority, 'Optional; lower numbers are tried first.'),
    field('Max concurrent', maxConcurrent, 'Optional; 0 or empty = no limit.'),
  );

  let entry: CatalogProvider | undefined;
  let pform: ProviderForm = renderProviderForm(undefined, { mode: 'add', idPrefix: 'conn' });
  slot.replaceChildren(...(pform.element ? [pform.element] : []));

  // The provider decides the rest: its form (re-rendered only when its
  // schema differs, so typed values stay) and whether a base URL is required.
  const syncProvider = () => {
    const typed = provider.value.trim().toLowerCase();
    entry = findProvider(catalog, typed);
    if (formSignature(entry) !== pform.signature || (entry?.id ?? '') !== (slot.firstElementChild as HTMLElement | null)?.dataset['provider']) {
      pform = renderProviderForm(entry, { mode: 'add', idPrefix: 'conn' });
      slot.replaceChildren(...(pform.element ? [pform.element] : []));
    }
    setRequired(baseUrl, needsBaseUrl(entry));
    name.placeholder = typed;
  };
  provider.addEventListener('input', syncProvider);
  void catalogReady.then((list) => {
    if (ctx.signal.aborted) return;
    catalog = list;
    datalist.replaceChildren(...addableProviders(list).map((p) => h('option', { value: p.id }, p.name)));
    syncProvider();
  });

  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'add-connection-title' },
    h('h2', { id: 'add-connection-title' }, 'Add connection'),
    datalist,
    head,
    slot,
    rest,
    status,
    h('div', { class: 'form-actions' }, submit),
  );

  const controls: Record<string, HTMLInputElement> = { provider, name, baseUrl, prefix, priority, maxConcurrent, models };
  const controlFor = (param: string): HTMLElement | undefined => controls[param] ?? pform.controlForParam(param);

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const el of Object.values(controls)) showFieldError(el, null);
    pform.clearErrors();
    if (!form.reportValidity()) return;
    const body: NewConnection = {
      provider: provider.value.trim(),
      name: name.value.trim() || provider.value.trim(),
      authType: 'apikey',
      verify: true, // the key is checked when it is entered
    };
    if (baseUrl.value.trim()) body.baseUrl = baseUrl.value.trim();
    if (prefix.value.trim()) body.prefix = prefix.value.trim();
    if (priority.value.trim() !== '') body.priority = Number(priority.value);
    if (maxConcurrent.value.trim() !== '') body.maxConcurrent = Number(maxConcurrent.value);
    const modelList = parseList(models.value);
    if (modelList.length) body.models = modelList;
    const own = await pform.value();
    if (own.errors.length) {
      pform.showErrors(own.errors)?.focus();
      return;
    }
    if (own.apiKey) body.apiKey = own.apiKey;
    if (own.providerSpecificData) body.providerSpecificData = own.providerSpecificData;

    status.replaceChildren();
    const outcome = await busy(
      [head, rest, ...(pform.element ? [pform.element] : []), submit],
      async (): Promise<{ created: Connection; warning?: string } | { failure: unknown }> => {
        try {
          const res = await endpoints.createConnection(body);
          return {
            created: res?.connection ?? ({ ...body, id: '', isActive: true } as Connection),
            ...(res?.warning ? { warning: res.warning } : {}),
          };
        } catch (err) {
          return { failure: err };
        }
      },
      { button: submit, label: 'Adding…' },
    );
    if (ctx.signal.aborted) return;
    if ('created' in outcome) {
      form.reset(); // the API key leaves the page with it
      syncProvider();
      await onCreated(outcome.created, outcome.warning);
      provider.focus();
    } else {
      (showRefusal(outcome.failure, status, controlFor) ?? submit).focus();
    }
  });

  return form;
}

function setRequired(input: HTMLInputElement, required: boolean): void {
  input.required = required;
  const label = input.closest('.field')?.querySelector('label');
  if (!label) return;
  let mark = label.querySelector('.req');
  if (required && !mark) {
    mark = h('span', { class: 'req', 'aria-hidden': 'true' }, ' *');
    label.appendChild(mark);
  } else if (!required && mark) {
    mark.remove();
  }
}
