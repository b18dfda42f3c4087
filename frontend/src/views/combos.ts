import { ApiError, endpoints, isAbortError, type Connection } from '../api';
import { badge, busy, clear, confirmDialog, emptyState, errorBox, field, formatDate, formatTime, h, loading, notice, setFieldError } from '../dom';
import {
  draftFromCombo,
  emptyDraft,
  emptyTarget,
  fieldForComboError,
  hasExplicitPriorities,
  modelSuggestions,
  moveItem,
  pinMismatch,
  STRATEGIES,
  strategyInfo,
  targetsSummary,
  usesField,
  validateCombo,
  type Combo,
  type ComboDraft,
  type ComboFieldKey,
  type TargetDraft,
  type TargetField,
} from '../lib/combos';
import { explainModel, targetBadges, type ExplainAnswer, type ExplainRow } from '../lib/explain';
import { formatCountdown } from '../lib/format';
import { backIn, healthStore, stateBadge } from '../lib/healthmodel';
import { deniedNote, fixButtons } from './fix-buttons';
import { live } from '../live';
import type { ViewContext } from '../router';
import { gateWrites } from './role-gate';

/** Live events say something changed; one explain request a moment later covers a burst. */
const LIVE_REFRESH_MS = 300;
/** Typing a target model asks the gateway about it after a pause. */
const MODEL_EXPLAIN_DELAY_MS = 500;

const TARGET_FIELD_LABEL: Record<TargetField, string> = {
  weight: 'Weight',
  contextWindow: 'Context window',
  costPer1M: 'Cost per 1M',
};
const TARGET_FIELD_PLACEHOLDER: Record<TargetField, string> = {
  weight: '1',
  contextWindow: 'tokens',
  costPer1M: 'USD',
};
const TARGET_FIELDS: readonly TargetField[] = ['weight', 'contextWindow', 'costPer1M'];

interface PanelState {
  answer: ExplainAnswer | null;
  receivedAt: number;
  error: unknown;
  loading: boolean;
  seq: number;
}

interface TargetExplain {
  answer: ExplainAnswer | null;
  receivedAt: number;
  error: unknown;
  seq: number;
}

interface EditorState {
  mode: 'new' | 'edit';
  original: Combo | null;
  draft: ComboDraft;
  submitted: boolean;
  saving: boolean;
  /** Client errors by slot ("name" … or "<row key>:<field>"). */
  errors: Map<string, string>;
  /** Server errors by slot, dropped when their field is edited. */
  serverErrors: Map<string, string>;
}

/** "a/m" on its connection → the row's slot key for a field. */
const slotKey = (rowKey: string, f: string) => `${rowKey}:${f}`;

export function renderCombos(root: HTMLElement, ctx: ViewContext): () => void {
  let combos: Combo[] | null = null;
  let strategies: string[] = [...STRATEGIES];
  let connections: Connection[] = [];
  let editor: EditorState | null = null;
  const panels = new Map<string, PanelState>();
  const targetExplains = new Map<string, TargetExplain>();
  let liveTimer = 0;
  let modelTimer = 0;
  let loadSeq = 0;
  let explainSeq = 0;

  const heading = h('h1', { tabindex: '-1' }, 'Combos');
  const newBtn = h('button', { type: 'button', class: 'btn btn-small btn-primary' }, 'New combo');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const message = h('div', { class: 'row-message', 'aria-live': 'polite' });
  const listArea = h('div', { class: 'list-area' });
  const editorArea = h('div', { class: 'editor-area' });
  const announcer = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite', 'data-testid': 'announcer' });
  const modelList = h('datalist', { id: 'combo-models' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, h('div', { class: 'btn-row' }, newBtn, refreshBtn)),
    h(
      'p',
      { class: 'muted page-intro' },
      'A combo is a named group of models, possibly on different providers. Clients send its name (or combo/<name>) as the model; the strategy decides which target serves each request, and the others are fallbacks. “Why?” shows what a request would do right now.',
    ),
    message,
    h('section', { 'aria-labelledby': 'combos-list-title' }, h('h2', { id: 'combos-list-title', class: 'visually-hidden' }, 'Combos'), listArea),
    editorArea,
    announcer,
    modelList,
  );

  // ------------------------------------------------------------ loading

  async function load(quiet = false): Promise<void> {
    const seq = ++loadSeq;
    if (!quiet || combos === null) {
      clear(listArea, loading('Loading combos…'));
      listArea.setAttribute('aria-busy', 'true');
    }
    refreshBtn.disabled = true;
    try {
      const [list, strat, conns] = await Promise.all([
        endpoints.listCombos(ctx.signal),
        endpoints.comboStrategies(ctx.signal).catch(() => null),
        endpoints.listConnections(ctx.signal).catch(() => null),
      ]);
      if (ctx.signal.aborted || seq !== loadSeq) return;
      combos = [...list].sort((a, b) => a.name.localeCompare(b.name));
      if (strat && strat.length) strategies = strat;
      if (conns) setConnections(conns);
      renderList();
      for (const id of panels.keys()) {
        if (combos.some((c) => c.id === id)) void loadExplain(id);
        else panels.delete(id);
      }
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted || seq !== loadSeq) return;
      combos = null;
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      if (seq === loadSeq) {
        listArea.removeAttribute('aria-busy');
        refreshBtn.disabled = false;
      }
    }
  }

  function setConnections(list: Connection[]): void {
    connections = [...list].sort((a, b) => (a.name || a.provider).localeCompare(b.name || b.provider));
    modelList.replaceChildren(...modelSuggestions(connections).map((m) => h('option', { value: m })));
    // The editor's rows keep their inputs (and the caret); only the pickers and pin warnings change.
    for (const tr of targetsBody.querySelectorAll<HTMLElement>('tr[data-target-key]')) {
      const t = editor?.draft.targets.find((x) => x.key === tr.dataset['targetKey']);
      const select = tr.querySelector<HTMLSelectElement>('select[data-field="connectionId"]');
      if (!t || !select) continue;
      select.replaceChildren(...connectionOptions(t));
      select.value = t.connectionId;
      renderPinWarning(tr, t);
    }
  }

  async function reloadConnections(): Promise<void> {
    try {
      const list = await endpoints.listConnections(ctx.signal);
      if (!ctx.signal.aborted) setConnections(list);
    } catch {
      /* names stay as they were */
    }
  }

  // ------------------------------------------------------------ list

  const findCombo = (id: string) => combos?.find((c) => c.id === id);
  const focusKeyOf = (el: Element | null) => (el as HTMLElement | null)?.dataset?.['focusKey'];
  function focusByKey(scope: HTMLElement, ...keys: Array<string | undefined>): boolean {
    for (const k of keys) {
      if (!k) continue;
      const el = scope.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(k)}"]`);
      if (el && !(el as HTMLButtonElement).disabled) {
        el.focus();
        return true;
      }
    }
    return false;
  }

  function renderList(focusKey = listArea.contains(document.activeElement) ? focusKeyOf(document.activeElement) : undefined): void {
    const list = combos ?? [];
    if (list.length === 0) {
      clear(
        listArea,
        emptyState('No combos yet', 'Create one to give clients a single model name that fails over across providers, e.g. “coding” → anthropic/claude-sonnet, then openai/gpt-4o.'),
      );
      if (focusKey) heading.focus();
      return;
    }
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table combos-table', 'data-testid': 'combos-table' },
          h('caption', { class: 'visually-hidden' }, `${list.length} combo${list.length === 1 ? '' : 's'}`),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Name', 'Strategy', 'Targets', 'Updated'].map((t) => h('th', { scope: 'col' }, t)),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
            ),
          ),
          list.map(renderComboBody),
        ),
      ),
    );
    for (const id of panels.keys()) renderPanel(id);
    focusByKey(listArea, focusKey);
  }

  /** The health model's word on a combo that cannot serve fully (dead: no target can). */
  function comboHealthBadge(name: string): HTMLElement | null {
    const ch = healthStore.get()?.combos?.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!ch || ch.state === 'serving') return null;
    const b = stateBadge(ch.state);
    // Why for each target that cannot be served, with its connections' fixes
    // (the same buttons as on the Overview).
    const targets = (ch.targets ?? []).filter((t) => !t.serving);
    return h(
      'div',
      { class: 'block', 'data-testid': 'combo-health' },
      badge(b.label, b.tone, ch.reason),
      ch.until ? h('small', { class: 'muted' }, ` ${backIn(ch.until)}`) : null,
      targets.length
        ? h(
            'ul',
            { class: 'lock-list small', 'data-testid': 'combo-targets' },
            targets.map((t) =>
              h(
                'li',
                null,
                h('code', null, t.model),
                ' ',
                h('span', null, t.reason ?? 'cannot be served'),
                ...(t.connections ?? []).map((cc) => {
                  const m = healthStore.connection(cc.id);
                  const btns = fixButtons(
                    { id: cc.id, name: cc.name, state: cc.state, ...(m ? { providerId: m.provider, locks: m.locks ?? [] } : {}), ...(m?.leaseId ? { leaseId: m.leaseId } : {}) },
                    cc.fixes,
                    // Several connections can sit under one target: each fix names its own.
                    { signal: ctx.signal, message, onDone: () => undefined, nameTarget: true },
                  );
                  return btns.length ? h('div', { class: 'btn-row', 'data-connection': cc.id }, btns, deniedNote(btns)) : null;
                }),
              ),
            ),
          )
        : null,
    );
  }

  function renderComboBody(c: Combo): HTMLTableSectionElement {
    const panelId = `explain-${c.id}`;
    const open = panels.has(c.id);
    const whyBtn = h(
      'button',
      {
        type: 'button',
        class: 'btn btn-small',
        'aria-expanded': String(open),
        'aria-controls': panelId,
        'aria-label': `Why? Routing of ${c.name}`,
        'data-focus-key': `${c.id}:why`,
      },
      'Why?',
    );
    const editBtn = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Edit ${c.name}`, 'data-focus-key': `${c.id}:edit` }, 'Edit');
    const delBtn = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Delete ${c.name}`, 'data-focus-key': `${c.id}:delete` }, 'Delete');
    whyBtn.addEventListener('click', () => toggleExplain(c.id));
    editBtn.addEventListener('click', () => openEditor(c));
    delBtn.addEventListener('click', () => void deleteCombo(c, delBtn));
    gateWrites([[editBtn, 'PUT /api/combos/{id}'], [delBtn, 'DELETE /api/combos/{id}']]);
    const n = c.targets?.length ?? 0;
    const panelCell = h('td', { colspan: '5', class: 'explain-cell' }, h('div', { id: panelId, class: 'explain-panel', 'data-testid': 'explain-panel' }));
    const tbody = h(
      'tbody',
      { 'data-combo': c.name, 'data-testid': 'combo-row' },
      h(
        'tr',
        null,
        h(
          'th',
          { scope: 'row' },
          h('code', { class: 'cell-main' }, c.name),
          comboHealthBadge(c.name),
          c.description ? h('small', { class: 'muted block' }, c.description) : null,
        ),
        h('td', null, h('span', { class: 'chip', title: strategyInfo(c.strategy).description }, c.strategy)),
        h('td', null, h('span', { class: 'targets-summary' }, targetsSummary(c)), h('small', { class: 'muted block' }, `${n} target${n === 1 ? '' : 's'}`)),
        h('td', { class: 'nowrap' }, formatDate(c.updatedAt ?? c.createdAt)),
        h('td', { class: 'actions' }, h('div', { class: 'btn-row' }, whyBtn, editBtn, delBtn)),
      ),
      h('tr', { class: 'detail-row', hidden: !open }, panelCell),
    );
    return tbody;
  }

  // ------------------------------------------------------------ explain panel

  function panelEl(id: string): HTMLElement | null {
    return listArea.querySelector<HTMLElement>(`#${CSS.escape(`explain-${id}`)}`);
  }

  function toggleExplain(id: string): void {
    const el = panelEl(id);
    const row = el?.closest('tr');
    const btn = listArea.querySelector<HTMLButtonElement>(`[data-focus-key="${CSS.escape(`${id}:why`)}"]`);
    if (panels.has(id)) {
      panels.delete(id);
      if (row) row.hidden = true;
      btn?.setAttribute('aria-expanded', 'false');
      return;
    }
    panels.set(id, { answer: null, receivedAt: Date.now(), error: undefined, loading: true, seq: 0 });
    if (row) row.hidden = false;
    btn?.setAttribute('aria-expanded', 'true');
    renderPanel(id);
    void loadExplain(id);
  }

  async function loadExplain(id: string): Promise<void> {
    const c = findCombo(id);
    const st = panels.get(id);
    if (!c || !st) return;
    const seq = ++explainSeq;
    st.seq = seq;
    st.loading = true;
    if (!st.answer) renderPanel(id);
    else panelEl(id)?.setAttribute('aria-busy', 'true');
    try {
      const answer = await endpoints.explainRouting(c.name, ctx.signal);
      if (ctx.signal.aborted || panels.get(id)?.seq !== seq) return;
      Object.assign(st, { answer, receivedAt: Date.now(), error: undefined, loading: false });
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted || panels.get(id)?.seq !== seq) return;
      Object.assign(st, { error: err, loading: false });
    }
    renderPanel(id);
  }

  function renderPanel(id: string): void {
    const el = panelEl(id);
    const st = panels.get(id);
    const c = findCombo(id);
    if (!el || !st || !c) return;
    el.removeAttribute('aria-busy');
    const hadFocus = el.contains(document.activeElement) ? focusKeyOf(document.activeElement) : undefined;
    const refresh = h('button', { type: 'button', class: 'btn btn-small', 'data-focus-key': `${id}:explain-refresh`, 'aria-label': `Refresh the routing of ${c.name}` }, 'Refresh');
    refresh.addEventListener('click', () => void loadExplain(id));
    const head = h(
      'div',
      { class: 'section-head' },
      h('h3', { class: 'explain-title' }, `Routing of “${c.name}” right now`),
      h(
        'div',
        { class: 'btn-row' },
        st.answer ? h('small', { class: 'muted' }, `as of ${formatTime(new Date(st.receivedAt))}`) : null,
        refresh,
      ),
    );
    if (!st.answer) {
      clear(el, head, st.error ? errorBox(st.error, () => void loadExplain(id)) : loading('Asking the gateway…'));
      focusByKey(el, hadFocus);
      return;
    }
    const model = explainModel(st.answer, st.receivedAt, c.targets ?? [], connections, (id) => healthStore.connection(id));
    const rows = [...model.eligible, ...model.excluded];
    clear(
      el,
      head,
      h('p', { class: 'explain-summary', 'data-testid': 'explain-summary' }, model.summary),
      model.error ? h('p', { class: 'alert alert-warn', role: 'status' }, `${model.error.message} `, h('small', { class: 'alert-code' }, model.error.code)) : null,
      st.error ? errorBox(st.error) : null,
      rows.length
        ? h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table table-inner explain-table' },
              h('caption', { class: 'visually-hidden' }, `Candidates for ${c.name}: ${model.eligible.length} eligible in order, then ${model.excluded.length} excluded`),
              h('thead', null, h('tr', null, ['Order', 'Target', 'Connection', 'Provider', 'Status', 'Why', 'Back in'].map((t) => h('th', { scope: 'col' }, t)))),
              h('tbody', null, rows.map(explainRow)),
            ),
          )
        : null,
    );
    focusByKey(el, hadFocus);
  }

  function explainRow(r: ExplainRow): HTMLTableRowElement {
    const status = r.eligible
      ? badge('eligible', 'ok', 'Would be tried in this order.')
      : badge(r.info!.label, r.info!.tone, r.info!.description);
    status.setAttribute('data-testid', 'reason-badge');
    const why = r.eligible ? (r.reason ?? '') : r.info!.description;
    return h(
      'tr',
      {
        'data-testid': 'explain-row',
        'data-status': r.eligible ? 'eligible' : 'excluded',
        'data-reason': r.eligible ? null : (r.reason ?? ''),
        'data-target': r.targetLabel,
        class: r.eligible ? null : 'row-excluded',
      },
      h('td', { class: 'num' }, r.eligible && r.order != null ? String(r.order) : h('span', { class: 'muted', 'aria-label': 'not tried' }, '—')),
      h('th', { scope: 'row' }, h('code', null, r.targetLabel), r.targetLabel !== r.model && !r.targetLabel.endsWith(`/${r.model}`) ? h('small', { class: 'muted block' }, `upstream ${r.model}`) : null),
      h('td', null, r.connectionName || h('span', { class: 'mono-small' }, r.connectionId)),
      h('td', null, h('code', { class: 'nowrap' }, r.providerLabel || '—')),
      h('td', null, status),
      h('td', { class: 'small' }, why),
      h('td', null, r.until ? liveCountdown(r.until, 'explain-countdown') : h('span', { class: 'muted' }, r.eligible ? '—' : r.transient === false ? 'when fixed' : '—')),
    );
  }

  // ------------------------------------------------------------ countdowns

  function liveCountdown(until: number, testId: string): HTMLElement {
    return h('span', { class: 'countdown', 'data-until': String(until), 'data-testid': testId, title: `until ${formatTime(new Date(until))}` }, formatCountdown(until - Date.now()));
  }

  const ticker = window.setInterval(() => {
    const now = Date.now();
    let ended = false;
    for (const el of root.querySelectorAll<HTMLElement>('[data-until]')) {
      const left = Number(el.dataset['until']) - now;
      if (left > 0) {
        el.textContent = formatCountdown(left);
      } else {
        el.textContent = '0:00';
        el.removeAttribute('data-until'); // once: the refetch replaces it
        ended = true;
      }
    }
    if (ended) scheduleLiveRefresh(); // an exclusion ended: ask what routing does now
  }, 1000);

  // ------------------------------------------------------------ editor

  const nameInput = h('input', { id: 'combo-name', type: 'text', name: 'name', required: true, autocomplete: 'off', spellcheck: 'false', 'data-slot': 'name' });
  const strategySelect = h('select', { id: 'combo-strategy', name: 'strategy', 'data-slot': 'strategy' });
  const descriptionInput = h('input', { id: 'combo-description', type: 'text', name: 'description', autocomplete: 'off', 'data-slot': 'description' });
  const retriesInput = h('input', { id: 'combo-retries', type: 'text', inputmode: 'numeric', name: 'maxRetries', autocomplete: 'off', 'data-slot': 'maxRetries' });
  const stickyInput = h('input', { id: 'combo-sticky', type: 'text', inputmode: 'decimal', name: 'stickyTtl', autocomplete: 'off', 'data-slot': 'stickyTtl' });
  const editorTitle = h('h2', { id: 'combo-editor-title' });
  const targetsError = h('p', { id: 'combo-targets-error', class: 'field-error', role: 'alert' });
  const targetsBody = h('tbody', null);
  const targetsHeadRow = h('tr', null);
  const addTargetBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Add target');
  const saveBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save combo');
  const cancelBtn = h('button', { type: 'button', class: 'btn' }, 'Cancel');
  const formStatus = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const priorityNote = h('p', { class: 'alert alert-info', role: 'status', hidden: true }, 'Some targets had explicit priorities set through the API. They are listed in that order; saving replaces the priorities by the order of this list.');
  const stickyField = field('Sticky TTL (seconds)', stickyInput, 'Round-robin keeps a session (X-Session-Id) on its target this long; 0 = not sticky.');
  const strategyField = field('Strategy', strategySelect, strategyInfo('priority').description);
  const strategyHint = strategyField.querySelector<HTMLElement>('.hint')!;
  const retriesField = field('Max retries per target', retriesInput, 'Same-target retries of a transient failure before the next target, 0–5. Default 1.');

  const form = h(
    'form',
    { class: 'card combo-editor', novalidate: true, 'aria-labelledby': 'combo-editor-title', 'data-testid': 'combo-editor' },
    editorTitle,
    h(
      'div',
      { class: 'form-grid' },
      field('Name', nameInput, 'Clients send this as the model (or combo/<name>). Letters, digits, “.”, “_”, “:”, “-”.'),
      strategyField,
      retriesField,
      stickyField,
      h('div', { class: 'field-wide' }, field('Description', descriptionInput)),
    ),
    h(
      'fieldset',
      { class: 'targets-fieldset', 'aria-describedby': 'combo-targets-hint' },
      h('legend', { class: 'group-legend' }, 'Targets'),
      h(
        'p',
        { id: 'combo-targets-hint', class: 'hint' },
        'Models as provider/model or <prefix>/model (suggestions come from your connections; any text works). The order matters for priority and fill-first, and breaks ties for every strategy. Move a target with ↑ / ↓, or Alt+↑ / Alt+↓ from any of its fields. The status column is live.',
      ),
      priorityNote,
      targetsError,
      h('div', { class: 'table-wrap' }, h('table', { class: 'table targets-table', 'data-testid': 'targets-table' }, h('thead', null, targetsHeadRow), targetsBody)),
      h('div', { class: 'form-actions' }, addTargetBtn),
    ),
    h('div', { class: 'form-footer' }, h('div', { class: 'form-actions' }, saveBtn, cancelBtn), formStatus),
  );

  function renderStrategyOptions(): void {
    const d = editor!.draft;
    const names = strategies.includes(d.strategy) || !d.strategy ? strategies : [...strategies, d.strategy];
    strategySelect.replaceChildren(...names.map((s) => h('option', { value: s, selected: s === d.strategy }, s)));
    strategySelect.value = d.strategy;
  }

  function applyStrategy(): void {
    const d = editor!.draft;
    const info = strategyInfo(d.strategy);
    strategyHint.textContent = info.description;
    stickyField.hidden = !info.sticky;
  }

  function openEditor(c: Combo | null): void {
    const draft = c ? draftFromCombo(c) : emptyDraft(strategies.includes('priority') ? 'priority' : (strategies[0] ?? 'priority'));
    editor = { mode: c ? 'edit' : 'new', original: c, draft, submitted: false, saving: false, errors: new Map(), serverErrors: new Map() };
    editorTitle.textContent = c ? `Edit “${c.name}”` : 'New combo';
    saveBtn.textContent = c ? 'Save changes' : 'Create combo';
    nameInput.value = draft.name;
    descriptionInput.value = draft.description;
    retriesInput.value = draft.maxRetries;
    stickyInput.value = draft.stickyTtl;
    priorityNote.hidden = !(c && hasExplicitPriorities(c));
    formStatus.replaceChildren();
    renderStrategyOptions();
    applyStrategy();
    renderTargets();
    showErrors();
    if (!editorArea.contains(form)) clear(editorArea, form);
    form.scrollIntoView({ block: 'start', behavior: 'auto' });
    nameInput.focus();
    void refreshTargetExplains();
  }

  function closeEditor(focus?: string): void {
    editor = null;
    editorArea.replaceChildren();
    targetExplains.clear();
    if (!focus || !focusByKey(listArea, focus)) newBtn.focus();
  }

  function renderTargets(focusKey?: string): void {
    if (!editor) return;
    const d = editor.draft;
    const active = focusKey ?? (targetsBody.contains(document.activeElement) ? focusKeyOf(document.activeElement) : undefined);
    const extra = TARGET_FIELDS.filter((f) => usesField(d.strategy, f));
    targetsHeadRow.replaceChildren(
      h('th', { scope: 'col', class: 'num' }, '#'),
      h('th', { scope: 'col' }, 'Model'),
      h('th', { scope: 'col' }, 'Connection'),
      ...extra.map((f) => h('th', { scope: 'col' }, TARGET_FIELD_LABEL[f])),
      h('th', { scope: 'col' }, 'Live status'),
      h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Order and remove')),
    );
    targetsBody.replaceChildren(...d.targets.map((t, i) => targetRow(t, i, d.targets.length, extra)));
    addTargetBtn.disabled = d.targets.length >= 100;
    showErrors();
    updateBadges();
    if (active) {
      // A move button that is now disabled (top or bottom) hands focus to its twin.
      const [key, control] = [active.slice(0, active.lastIndexOf(':')), active.slice(active.lastIndexOf(':') + 1)];
      const twin = control === 'up' ? 'down' : control === 'down' ? 'up' : 'model';
      focusByKey(targetsBody, active, `${key}:${twin}`, `${key}:model`);
    }
  }

  function connectionOptions(t: TargetDraft): HTMLOptionElement[] {
    const opts = [h('option', { value: '', selected: !t.connectionId }, 'Any connection')];
    for (const c of connections) {
      const label = `${c.name || c.id} (${c.prefix ? `${c.provider}, prefix ${c.prefix}` : c.provider})${c.isActive === false ? ' — disabled' : ''}`;
      opts.push(h('option', { value: c.id, selected: c.id === t.connectionId }, label));
    }
    if (t.connectionId && !connections.some((c) => c.id === t.connectionId)) {
      opts.push(h('option', { value: t.connectionId, selected: true }, `Unknown connection ${t.connectionId}`));
    }
    return opts;
  }

  function targetRow(t: TargetDraft, i: number, n: number, extra: readonly TargetField[]): HTMLTableRowElement {
    const pos = i + 1;
    const fk = (what: string) => `${t.key}:${what}`;
    const errSlot = (f: string) => h('small', { id: `ct-${t.key}-${f}-error`, class: 'field-error' });
    const model = h('input', {
      id: `ct-${t.key}-model`,
      type: 'text',
      list: 'combo-models',
      value: t.model,
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'provider/model',
      'aria-label': `Target ${pos} model`,
      'data-focus-key': fk('model'),
      'data-field': 'model',
    });
    const conn = h('select', { id: `ct-${t.key}-connectionId`, 'aria-label': `Target ${pos} connection`, 'data-focus-key': fk('connectionId'), 'data-field': 'connectionId' }, connectionOptions(t));
    const up = h(
      'button',
      { type: 'button', class: 'btn btn-small btn-icon', 'aria-label': `Move target ${pos} up`, 'data-focus-key': fk('up'), disabled: i === 0, title: 'Move up (Alt+↑)' },
      '↑',
    );
    const down = h(
      'button',
      { type: 'button', class: 'btn btn-small btn-icon', 'aria-label': `Move target ${pos} down`, 'data-focus-key': fk('down'), disabled: i === n - 1, title: 'Move down (Alt+↓)' },
      '↓',
    );
    const remove = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Remove target ${pos}`, 'data-focus-key': fk('remove'), disabled: n <= 1 }, 'Remove');
    up.addEventListener('click', () => moveTarget(t.key, -1, 'up'));
    down.addEventListener('click', () => moveTarget(t.key, 1, 'down'));
    remove.addEventListener('click', () => removeTarget(t.key));
    const pinWarn = pinMismatch(t, connections) ? h('small', { class: 'warn-text block' }, 'This connection does not serve this model: the target would never be used.') : null;
    return h(
      'tr',
      { 'data-target-key': t.key, 'data-testid': 'target-row', 'data-model': t.model.trim() },
      h('td', { class: 'num' }, String(pos)),
      h('td', { class: 'cell-model' }, model, errSlot('model')),
      h('td', null, conn, errSlot('connectionId'), pinWarn),
      extra.map((f) =>
        h(
          'td',
          { class: 'cell-num' },
          h('input', {
            id: `ct-${t.key}-${f}`,
            type: 'text',
            inputmode: f === 'costPer1M' ? 'decimal' : 'numeric',
            value: t[f],
            placeholder: TARGET_FIELD_PLACEHOLDER[f],
            autocomplete: 'off',
            'aria-label': `Target ${pos} ${TARGET_FIELD_LABEL[f].toLowerCase()}`,
            title: f === 'weight' ? 'Probability ∝ weight; 0 = fallback only; empty = 1' : null,
            'data-focus-key': fk(f),
            'data-field': f,
          }),
          errSlot(f),
        ),
      ),
      // Not a live region: its countdowns tick every second.
      h('td', { class: 'target-status', 'data-testid': 'target-status' }),
      h('td', { class: 'actions' }, h('div', { class: 'btn-row' }, up, down, remove)),
    );
  }

  const rowIndex = (key: string) => editor?.draft.targets.findIndex((t) => t.key === key) ?? -1;

  function moveTarget(key: string, delta: number, control: string): void {
    if (!editor) return;
    const i = rowIndex(key);
    const res = moveItem(editor.draft.targets, i, delta);
    if (!res.moved) return;
    editor.draft.targets = res.list;
    renderTargets(`${key}:${control}`);
    const t = res.list[res.index]!;
    announcer.textContent = `Moved ${t.model.trim() || 'the target'} to position ${res.index + 1} of ${res.list.length}.`;
  }

  function removeTarget(key: string): void {
    if (!editor || editor.draft.targets.length <= 1) return;
    const i = rowIndex(key);
    const gone = editor.draft.targets[i];
    editor.draft.targets = editor.draft.targets.filter((t) => t.key !== key);
    for (const k of [...editor.errors.keys(), ...editor.serverErrors.keys()]) {
      if (k.startsWith(`${key}:`)) {
        editor.errors.delete(k);
        editor.serverErrors.delete(k);
      }
    }
    const next = editor.draft.targets[Math.min(i, editor.draft.targets.length - 1)]!;
    renderTargets(`${next.key}:remove`);
    if (editor.submitted) validate();
    announcer.textContent = `Removed target ${i + 1}${gone?.model ? ` (${gone.model})` : ''}.`;
  }

  addTargetBtn.addEventListener('click', () => {
    if (!editor) return;
    const t = emptyTarget();
    editor.draft.targets = [...editor.draft.targets, t];
    renderTargets(`${t.key}:model`);
  });

  targetsBody.addEventListener('keydown', (ev) => {
    if (!ev.altKey || (ev.key !== 'ArrowUp' && ev.key !== 'ArrowDown')) return;
    const tr = (ev.target as HTMLElement).closest<HTMLElement>('tr[data-target-key]');
    if (!tr) return;
    ev.preventDefault();
    const control = focusKeyOf(ev.target as Element)?.split(':').pop() ?? 'model';
    moveTarget(tr.dataset['targetKey']!, ev.key === 'ArrowUp' ? -1 : 1, control);
  });

  function onTargetInput(ev: Event): void {
    if (!editor) return;
    const el = ev.target as HTMLInputElement | HTMLSelectElement;
    const tr = el.closest<HTMLElement>('tr[data-target-key]');
    const f = el.dataset['field'] as keyof TargetDraft | undefined;
    if (!tr || !f || f === 'key') return;
    const t = editor.draft.targets.find((x) => x.key === tr.dataset['targetKey']);
    if (!t) return;
    t[f] = el.value;
    editor.serverErrors.delete(slotKey(t.key, f));
    if (f === 'model') {
      tr.dataset['model'] = t.model.trim();
      window.clearTimeout(modelTimer);
      modelTimer = window.setTimeout(() => void refreshTargetExplains(), MODEL_EXPLAIN_DELAY_MS);
    }
    if (f === 'connectionId') {
      updateBadges();
      renderPinWarning(tr, t);
    }
    if (editor.submitted) validate();
    else showErrors();
  }
  targetsBody.addEventListener('input', onTargetInput);
  targetsBody.addEventListener('change', (ev) => {
    const el = ev.target as HTMLElement;
    if (el.dataset['field'] === 'model' && editor) {
      const tr = el.closest<HTMLElement>('tr[data-target-key]');
      const t = editor.draft.targets.find((x) => x.key === tr?.dataset['targetKey']);
      if (tr && t) renderPinWarning(tr, t);
    }
  });

  function renderPinWarning(tr: HTMLElement, t: TargetDraft): void {
    const cell = tr.querySelector<HTMLSelectElement>('select[data-field="connectionId"]')?.closest('td');
    cell?.querySelector('.warn-text')?.remove();
    if (cell && pinMismatch(t, connections)) cell.append(h('small', { class: 'warn-text block' }, 'This connection does not serve this model: the target would never be used.'));
  }

  form.addEventListener('input', (ev) => {
    if (!editor) return;
    const el = ev.target as HTMLInputElement | HTMLSelectElement;
    const slot = el.dataset['slot'];
    if (!slot) return;
    const d = editor.draft;
    if (slot === 'name') d.name = el.value;
    else if (slot === 'description') d.description = el.value;
    else if (slot === 'maxRetries') d.maxRetries = el.value;
    else if (slot === 'stickyTtl') d.stickyTtl = el.value;
    editor.serverErrors.delete(slot);
    formStatus.replaceChildren();
    if (editor.submitted) validate();
    else showErrors();
  });

  strategySelect.addEventListener('change', () => {
    if (!editor) return;
    editor.draft.strategy = strategySelect.value;
    editor.serverErrors.delete('strategy');
    applyStrategy();
    renderTargets();
    if (editor.submitted) validate();
  });

  /** Runs the client validation; errors go to their slots (rows by key, so they follow a move). */
  function validate(): ReturnType<typeof validateCombo> {
    const res = validateCombo(editor!.draft, strategies);
    editor!.errors = toSlots(res.errors);
    showErrors();
    return res;
  }

  function toSlots(errors: Map<ComboFieldKey, string>): Map<string, string> {
    const out = new Map<string, string>();
    for (const [k, msg] of errors) {
      const m = /^targets\.(\d+)\.(\w+)$/.exec(k);
      if (m) {
        const t = editor!.draft.targets[Number(m[1])];
        out.set(t ? slotKey(t.key, m[2]!) : 'targets', t ? msg : `Target ${Number(m[1]) + 1}: ${msg}`);
      } else out.set(k, msg);
    }
    return out;
  }

  function controlFor(slot: string): HTMLElement | null {
    switch (slot) {
      case 'name':
        return nameInput;
      case 'strategy':
        return strategySelect;
      case 'description':
        return descriptionInput;
      case 'maxRetries':
        return retriesInput;
      case 'stickyTtl':
        return stickyInput;
      case 'targets':
        return null;
    }
    const i = slot.lastIndexOf(':');
    return document.getElementById(`ct-${slot.slice(0, i)}-${slot.slice(i + 1)}`);
  }

  function showErrors(): void {
    if (!editor) return;
    const all = new Map([...editor.errors, ...editor.serverErrors]);
    for (const control of [nameInput, strategySelect, descriptionInput, retriesInput, stickyInput]) {
      showFieldErrorOf(control, all.get(control.dataset['slot']!) ?? null);
    }
    targetsError.textContent = all.get('targets') ?? '';
    for (const el of targetsBody.querySelectorAll<HTMLElement>('[data-field]')) {
      const tr = el.closest<HTMLElement>('tr[data-target-key]')!;
      showFieldErrorOf(el, all.get(slotKey(tr.dataset['targetKey']!, el.dataset['field']!)) ?? null);
    }
  }

  function showFieldErrorOf(control: HTMLElement, msg: string | null): void {
    const slot = document.getElementById(`${control.id}-error`);
    if (slot) setFieldError(control, slot, msg);
  }

  function firstErrorControl(): HTMLElement | null {
    if (!editor) return null;
    const all = new Map([...editor.errors, ...editor.serverErrors]);
    for (const k of ['name', 'strategy', 'maxRetries', 'stickyTtl', 'description']) if (all.has(k)) return controlFor(k);
    for (const t of editor.draft.targets) {
      for (const f of ['model', 'connectionId', ...TARGET_FIELDS]) if (all.has(slotKey(t.key, f))) return controlFor(slotKey(t.key, f));
    }
    return all.has('targets') ? addTargetBtn : null;
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void save();
  });

  async function save(): Promise<void> {
    if (!editor || editor.saving) return;
    const ed = editor;
    ed.submitted = true;
    ed.serverErrors.clear();
    formStatus.replaceChildren();
    const { errors, body } = validate();
    if (errors.size || !body) {
      clear(formStatus, h('p', { class: 'form-error', role: 'alert' }, `Fix ${errors.size} field${errors.size === 1 ? '' : 's'} before saving.`));
      firstErrorControl()?.focus();
      return;
    }
    ed.saving = true;
    const outcome = await busy([saveBtn, cancelBtn, addTargetBtn], async () => {
      try {
        return { saved: ed.mode === 'edit' && ed.original ? await endpoints.updateCombo(ed.original.id, body) : await endpoints.createCombo(body) };
      } catch (err) {
        return { err };
      }
    }, { button: saveBtn, label: 'Saving…' });
    ed.saving = false;
    if (ctx.signal.aborted || editor !== ed) return;
    if ('err' in outcome) {
      const err = outcome.err;
      const key = err instanceof ApiError ? fieldForComboError(err) : undefined;
      if (err instanceof ApiError && key) {
        const slots = toSlots(new Map([[key, `${err.message} (${err.code})`]]));
        for (const [k, v] of slots) ed.serverErrors.set(k, v);
        showErrors();
        clear(formStatus, h('p', { class: 'form-error', role: 'alert' }, 'The gateway rejected a value; see the highlighted field.'));
        firstErrorControl()?.focus();
      } else {
        clear(formStatus, errorBox(err));
      }
      return;
    }
    const saved = outcome.saved?.combo;
    const warnings = (outcome.saved?.warnings ?? []).filter((w): w is string => typeof w === 'string' && w !== '');
    const name = saved?.name ?? body.name;
    clear(
      message,
      h(
        'div',
        { class: 'stack' },
        notice(ed.mode === 'edit' ? `Saved combo “${name}”.` : `Created combo “${name}”. Clients can now send model “${name}”.`, 'success'),
        warnings.length
          ? h('div', { class: 'alert alert-warn', role: 'status', 'data-testid': 'combo-warnings' }, h('p', null, 'The gateway warns:'), h('ul', null, warnings.map((w) => h('li', null, w))))
          : null,
      ),
    );
    if (saved && combos) {
      combos = [...combos.filter((c) => c.id !== saved.id), saved].sort((a, b) => a.name.localeCompare(b.name));
      renderList();
      if (panels.has(saved.id)) void loadExplain(saved.id);
    }
    closeEditor(saved ? `${saved.id}:why` : undefined);
    void load(true);
  }

  cancelBtn.addEventListener('click', () => {
    const id = editor?.original?.id;
    closeEditor(id ? `${id}:edit` : undefined);
  });
  newBtn.addEventListener('click', () => openEditor(null));
  gateWrites([[newBtn, 'POST /api/combos'], [saveBtn, ['POST /api/combos', 'PUT /api/combos/{id}']]]);

  // ------------------------------------------------------------ editor live badges

  /** Asks the gateway about every target model of the editor (each once). */
  async function refreshTargetExplains(): Promise<void> {
    if (!editor) return;
    const models = [...new Set(editor.draft.targets.map((t) => t.model.trim()).filter(Boolean))];
    for (const m of [...targetExplains.keys()]) if (!models.includes(m)) targetExplains.delete(m);
    updateBadges();
    await Promise.all(
      models.map(async (m) => {
        const seq = ++explainSeq;
        const prev = targetExplains.get(m);
        targetExplains.set(m, { answer: prev?.answer ?? null, receivedAt: prev?.receivedAt ?? Date.now(), error: undefined, seq });
        try {
          const answer = await endpoints.explainRouting(m, ctx.signal);
          if (ctx.signal.aborted || targetExplains.get(m)?.seq !== seq) return;
          targetExplains.set(m, { answer, receivedAt: Date.now(), error: undefined, seq });
        } catch (err) {
          if (isAbortError(err) || ctx.signal.aborted || targetExplains.get(m)?.seq !== seq) return;
          targetExplains.set(m, { answer: null, receivedAt: Date.now(), error: err, seq });
        }
        updateBadges();
      }),
    );
  }

  function updateBadges(): void {
    if (!editor) return;
    for (const tr of targetsBody.querySelectorAll<HTMLElement>('tr[data-target-key]')) {
      const t = editor.draft.targets.find((x) => x.key === tr.dataset['targetKey']);
      const cell = tr.querySelector<HTMLElement>('.target-status');
      if (!t || !cell) continue;
      const m = t.model.trim();
      const ex = m ? targetExplains.get(m) : undefined;
      if (!m) {
        cell.replaceChildren(h('span', { class: 'muted' }, '—'));
        continue;
      }
      if (!ex || (!ex.answer && !ex.error)) {
        cell.replaceChildren(h('span', { class: 'muted small' }, 'checking…'));
        continue;
      }
      if (!ex.answer) {
        cell.replaceChildren(badge('unknown', 'muted', ex.error instanceof Error ? ex.error.message : 'The gateway did not answer.'));
        continue;
      }
      const badges = targetBadges(ex.answer, t.connectionId, ex.receivedAt, (id) => healthStore.connection(id));
      cell.replaceChildren(
        ...badges.map((b) =>
          h(
            'span',
            { class: 'target-badge', 'data-reason': b.reason, 'data-testid': 'target-badge' },
            badge(b.label, b.tone, b.title),
            b.until && b.until > Date.now() ? liveCountdown(b.until, 'target-countdown') : null,
          ),
        ),
      );
    }
  }

  // ------------------------------------------------------------ delete

  async function deleteCombo(c: Combo, btn: HTMLButtonElement): Promise<void> {
    const yes = await confirmDialog({
      title: `Delete combo “${c.name}”?`,
      message: `Clients that send model “${c.name}” get an error from now on (or the real model of that name, if one exists). The connections are not touched.`,
      confirmLabel: 'Delete combo',
      danger: true,
    });
    if (!yes) {
      btn.focus();
      return;
    }
    const list = combos ?? [];
    const i = list.findIndex((x) => x.id === c.id);
    const neighbour = list[i + 1] ?? list[i - 1];
    await busy([btn], async () => {
      try {
        await endpoints.deleteCombo(c.id);
        if (ctx.signal.aborted) return;
        combos = (combos ?? []).filter((x) => x.id !== c.id);
        panels.delete(c.id);
        if (editor?.original?.id === c.id) closeEditor();
        clear(message, notice(`Deleted combo “${c.name}”.`, 'success'));
        renderList();
        if (!focusByKey(listArea, neighbour ? `${neighbour.id}:delete` : undefined)) heading.focus();
      } catch (err) {
        if (!ctx.signal.aborted) clear(message, errorBox(err));
      }
    }, { button: btn, label: 'Deleting…' });
  }

  // ------------------------------------------------------------ live

  function scheduleLiveRefresh(): void {
    window.clearTimeout(liveTimer);
    liveTimer = window.setTimeout(() => {
      for (const id of panels.keys()) void loadExplain(id);
      if (editor) void refreshTargetExplains();
    }, LIVE_REFRESH_MS);
  }

  refreshBtn.addEventListener('click', () => {
    message.replaceChildren();
    void load();
    if (editor) void refreshTargetExplains();
  });

  const cleanups = [
    live.subscribe('breaker', scheduleLiveRefresh),
    live.subscribe('lockout', scheduleLiveRefresh),
    live.subscribe('lease', scheduleLiveRefresh),
    live.subscribe('connection', (ev) => {
      if (!connections.some((c) => c.id === ev.data.id)) void reloadConnections();
      scheduleLiveRefresh();
    }),
    (() => {
      let wasOpen = live.getStatus().state === 'open';
      return live.onStatus((s) => {
        const open = s.state === 'open';
        if (open && !wasOpen) scheduleLiveRefresh();
        wasOpen = open;
      });
    })(),
    // A combo dying or coming back re-badges the list.
    (() => {
      let sig = '';
      return healthStore.subscribe((r) => {
        // Connection states too: Why? reads them (an unreachable target is never "eligible").
        const next = [...(r.combos ?? []).map((x) => `${x.name}=${x.state}`), ...(r.connections ?? []).map((x) => `${x.id}=${x.state}`)].join(',');
        if (next === sig) return;
        sig = next;
        if (combos) renderList();
      });
    })(),
  ];

  void load();
  return () => {
    window.clearInterval(ticker);
    window.clearTimeout(liveTimer);
    window.clearTimeout(modelTimer);
    cleanups.forEach((fn) => fn());
  };
}
