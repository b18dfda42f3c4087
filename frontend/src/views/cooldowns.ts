import { ApiError, endpoints, isAbortError, type ClearCooldownsRequest, type ResilienceSettings } from '../api';
import { plainCode } from '../lib/words';
import { append, badge, busy, clear, confirmDialog, emptyState, errorBox, formatDate, h, loading, notice, setFieldError } from '../dom';
import {
  applyConnectionEventToRow,
  clearSummary,
  DEFAULT_STATUSES,
  deriveStatus,
  filterConnections,
  isSelectable,
  providersOf,
  pruneSelection,
  parseStatusParam,
  RULE_KEYS,
  RULE_LABELS,
  ruleRangeError,
  statusBadge,
  statusParam,
  STATUSES,
  tickConnections,
  toManagedConnections,
  type ManagedConnection,
} from '../lib/cooldowns';
import { formatCountdown } from '../lib/format';
import { applyLockoutEvent, lockoutReason } from '../lib/lockouts';
import { allFields, buildSections, countLeaves, diffToPatch, fieldForParam, formatValue, getAt, hintFor, validate, type FieldSpec } from '../lib/resilience-form';
import { live } from '../live';
import { href, type ViewContext } from '../router';
import { gateForm, gateWrites } from './role-gate';
import { saveResilience } from './save-settings';
import { countdown, focusKeyOf, restoreFocus, scopeBadge } from './lockout-parts';
import { healthStore, instant, stateInfo, toHealthState, type ConnHealth } from '../lib/healthmodel';
import { deniedNote, fixButtons } from './fix-buttons';
import { AUTH_WORDS, upstreamWords } from '../lib/plain';

/** Live events carry the new state; a fetch shortly after brings the error texts. */
const REFETCH_DELAY_MS = 500;
const COLUMNS = 6;

const nameOf = (c: ManagedConnection) => c.name || c.provider || c.id;

/** The list's table frame, built once and kept while the list shows rows. */
interface ListTable {
  wrap: HTMLElement;
  caption: HTMLElement;
  thead: HTMLElement;
}

/** One connection's rows: its checkbox stays the same element while the rest follows the data. */
interface RowEls {
  tbody: HTMLTableSectionElement;
  main: HTMLTableRowElement;
  box: HTMLInputElement;
  sig: string;
}

export function renderCooldowns(root: HTMLElement, ctx: ViewContext): () => void {
  let rows: ManagedConnection[] | null = null;
  let provider = ctx.params.get('provider') ?? '';
  let statuses = new Set<string>(parseStatusParam(ctx.params.get('status')) ?? DEFAULT_STATUSES);
  let selected = new Set<string>();
  let refetchTimer = 0;
  let loadSeq = 0;
  let clearing = false;
  // The list's table and its rows by connection id, kept across live updates.
  let table: ListTable | null = null;
  const rowEls = new Map<string, RowEls>();
  let shownNow: ManagedConnection[] = [];

  const heading = h('h1', { tabindex: '-1' }, 'Cooldown Manager');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');

  // ------------------------------------------------------------ filters

  const providerSelect = h('select', { id: 'cd-provider', name: 'provider' });
  const statusBoxes = STATUSES.map((s) => {
    const input = h('input', { type: 'checkbox', id: `cd-status-${s}`, name: 'status', value: s });
    input.checked = statuses.has(s);
    input.addEventListener('change', () => {
      if (input.checked) statuses.add(s);
      else statuses.delete(s);
      syncUrl();
      renderList();
    });
    const count = h('span', { class: 'count muted' });
    return { status: s, input, count, label: h('label', { class: 'check-pill', for: input.id }, input, stateInfo(s).label, ' ', count) };
  });
  providerSelect.addEventListener('change', () => {
    provider = providerSelect.value;
    syncUrl();
    renderList();
  });
  const countLine = h('p', { class: 'muted small', 'aria-live': 'polite', 'data-testid': 'cooldown-count' });

  const clearSelectedBtn = h('button', { type: 'button', class: 'btn btn-primary btn-small' }, 'Clear selected');
  const clearProviderBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Clear provider');
  const clearAllBtn = h('button', { type: 'button', class: 'btn btn-small btn-warn' }, 'Clear all');
  const summary = h('div', { class: 'row-message', 'aria-live': 'polite' });
  const listArea = h('div', { class: 'list-area' });

  const rules = renderRules(ctx);

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h(
      'p',
      { class: 'muted page-intro' },
      'Connections out of routing for a transient reason — a rate limit, a run of errors, a locked model — with live countdowns. Clear them to route to them again now. Terminal connections (banned, expired, out of credits) are listed but need new credentials, not a clear.',
    ),
    h(
      'div',
      { class: 'filters card' },
      h('div', { class: 'field field-inline' }, h('label', { for: providerSelect.id }, 'Provider'), providerSelect),
      h('fieldset', { class: 'status-filter' }, h('legend', null, 'Status'), h('div', { class: 'check-pills' }, statusBoxes.map((b) => b.label))),
    ),
    h('div', { class: 'toolbar' }, h('div', { class: 'btn-row' }, clearSelectedBtn, clearProviderBtn, clearAllBtn), countLine),
    summary,
    h('section', { 'aria-labelledby': 'cooldowns-list-title' }, h('h2', { id: 'cooldowns-list-title', class: 'visually-hidden' }, 'Connections'), listArea),
    rules.element,
  );

  function syncUrl(): void {
    const params: Record<string, string> = {};
    if (provider) params['provider'] = provider;
    const st = statusParam(statuses);
    if (st !== null) params['status'] = st;
    history.replaceState(history.state, '', href('/cooldowns', Object.keys(params).length ? params : undefined));
  }

  function renderProviderOptions(): void {
    const list = providersOf(rows ?? []);
    if (provider && !list.includes(provider)) list.push(provider);
    const current = JSON.stringify([...providerSelect.options].map((o) => o.value));
    const next = JSON.stringify(['', ...list]);
    if (current !== next) {
      providerSelect.replaceChildren(h('option', { value: '' }, 'All providers'), ...list.map((p) => h('option', { value: p }, p)));
    }
    providerSelect.value = provider;
  }

  // ------------------------------------------------------------ load

  async function load(quiet = false): Promise<void> {
    const seq = ++loadSeq;
    window.clearTimeout(refetchTimer);
    if (!quiet || rows === null) {
      clear(listArea, loading('Loading cooldowns…'));
      listArea.setAttribute('aria-busy', 'true');
    }
    refreshBtn.disabled = true;
    try {
      const data = await endpoints.listCooldowns(undefined, ctx.signal);
      if (ctx.signal.aborted || seq !== loadSeq) return;
      rows = toManagedConnections(data.connections, Date.now());
      renderList();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted || seq !== loadSeq) return;
      rows = null;
      countLine.textContent = '';
      updateActions([]);
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      if (seq === loadSeq) {
        listArea.removeAttribute('aria-busy');
        refreshBtn.disabled = false;
      }
    }
  }

  function scheduleRefetch(): void {
    window.clearTimeout(refetchTimer);
    refetchTimer = window.setTimeout(() => void load(true), REFETCH_DELAY_MS);
  }

  // ------------------------------------------------------------ render

  function updateActions(shown: ManagedConnection[]): void {
    const n = selected.size;
    clearSelectedBtn.textContent = n ? `Clear selected (${n})` : 'Clear selected';
    clearSelectedBtn.disabled = clearing || n === 0;
    clearProviderBtn.textContent = provider ? `Clear provider ${provider}` : 'Clear provider';
    clearProviderBtn.disabled = clearing || !provider || rows === null;
    clearProviderBtn.title = provider ? `Clear every transient cooldown and lockout of ${provider}` : 'Pick a provider above first';
    clearAllBtn.disabled = clearing || rows === null || rows.length === 0;
    // Clearing needs an operator: a viewer sees the buttons disabled with why.
    gateWrites([[clearSelectedBtn, 'POST /api/resilience/cooldowns'], [clearProviderBtn, 'POST /api/resilience/cooldowns'], [clearAllBtn, 'POST /api/resilience/cooldowns']]);
    const all = document.getElementById('cd-select-all') as HTMLInputElement | null;
    if (all) {
      const selectable = shown.filter(isSelectable);
      const picked = selectable.filter((r) => selected.has(r.id)).length;
      all.disabled = selectable.length === 0;
      all.checked = selectable.length > 0 && picked === selectable.length;
      all.indeterminate = picked > 0 && picked < selectable.length;
    }
  }

  function renderList(): void {
    renderProviderOptions();
    const all = rows ?? [];
    const shown = filterConnections(all, { provider, statuses });
    selected = pruneSelection(selected, shown);
    for (const b of statusBoxes) {
      const n = all.filter((r) => r.status === b.status && (!provider || r.provider === provider)).length;
      b.count.textContent = `(${n})`;
    }
    countLine.textContent = rows ? `Showing ${shown.length} of ${all.length} connection${all.length === 1 ? '' : 's'}` : '';
    const focusKey = focusKeyOf(document.activeElement);
    const hadFocus = listArea.contains(document.activeElement);

    if (shown.length === 0) {
      const outOfRouting = all.filter((r) => stateInfo(r.status).shownByDefault).length;
      clear(
        listArea,
        all.length === 0
          ? h('div', null, emptyState('No connections yet', 'Add one on the Connections page.'), h('p', { class: 'center' }, h('a', { href: href('/connections') }, 'Go to Connections')))
          : outOfRouting === 0 && !statuses.has('serving')
            ? emptyState('Every connection is in routing', `Nothing is cooling down or locked. Tick “${stateInfo('serving').label}” to list them anyway.`)
            : emptyState('No connection matches these filters', 'Change the provider or tick more statuses.'),
      );
      updateActions(shown);
      if (hadFocus) heading.focus();
      return;
    }

    if (!table || !listArea.contains(table.wrap)) table = buildTable();
    shownNow = shown;
    table.caption.textContent = `${shown.length} connection${shown.length === 1 ? '' : 's'}; locked models are listed under their connection`;
    // Keyed by connection: a row whose data did not change stays the same
    // element, and a changed row is updated in place around its checkbox, so
    // the checkbox a person is on keeps its focus and its checked state while
    // the page follows the live view (replacing it lost a Space pressed as the
    // row was re-rendered). A row is moved only when its place changed.
    const now = Date.now();
    const keep = new Set(shown.map((c) => c.id));
    for (const [id, r] of rowEls) {
      if (!keep.has(id)) {
        r.tbody.remove();
        rowEls.delete(id);
      }
    }
    let prev: Element = table.thead;
    for (const c of shown) {
      let r = rowEls.get(c.id);
      if (!r) {
        const box = h('input', { type: 'checkbox', 'data-select': c.id, 'data-focus-key': `${c.id}:select` });
        box.addEventListener('change', () => {
          if (box.checked) selected.add(c.id);
          else selected.delete(c.id);
          updateActions(shownNow);
        });
        const main = h('tr', null, h('td', { class: 'select-col' }, box));
        r = { tbody: h('tbody', { 'data-id': c.id }, main), main, box, sig: '' };
        rowEls.set(c.id, r);
      }
      updateBox(r.box, c);
      const sig = rowSignature(c, now);
      if (sig !== r.sig) {
        fillRow(r, c);
        r.sig = sig;
      }
      if (prev.nextElementSibling !== r.tbody) prev.after(r.tbody);
      prev = r.tbody;
    }
    updateActions(shown);
    if (hadFocus && !listArea.contains(document.activeElement)) restoreFocus(listArea, [focusKey, 'select-all'], heading);
  }

  /** The table's frame (caption, head, select-all); the rows are added by renderList. */
  function buildTable(): ListTable {
    rowEls.clear();
    const selectAll = h('input', {
      type: 'checkbox',
      id: 'cd-select-all',
      'data-focus-key': 'select-all',
      'aria-label': 'Select every shown connection that can be cleared',
    });
    selectAll.addEventListener('change', () => {
      for (const r of shownNow.filter(isSelectable)) {
        if (selectAll.checked) selected.add(r.id);
        else selected.delete(r.id);
      }
      for (const box of listArea.querySelectorAll<HTMLInputElement>('input[data-select]')) box.checked = selected.has(box.dataset['select']!);
      updateActions(shownNow);
    });
    const caption = h('caption', { class: 'visually-hidden' });
    const thead = h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', { scope: 'col', class: 'select-col' }, selectAll),
        ['Connection', 'Provider', 'Status', 'Cooldown', 'Last error'].map((t) => h('th', { scope: 'col' }, t)),
      ),
    );
    const wrap = h('div', { class: 'table-wrap' }, h('table', { class: 'table cooldowns-table', 'data-testid': 'cooldowns-table' }, caption, thead));
    clear(listArea, wrap);
    return { wrap, caption, thead };
  }

  /** What a row shows (the fields fillRow reads), so an unchanged row is left alone; the countdowns tick by themselves. */
  function rowSignature(c: ManagedConnection, now: number): string {
    return JSON.stringify([
      c.name, c.provider, c.authType, c.status, c.testStatus, c.backoffLevel, c.errorCode, c.lastErrorType, c.lastError, c.lastErrorAt,
      // A refetch recomputes the deadline from the remaining time: the same to the second.
      Math.round(c.until / 1000), c.until > now,
      c.lockoutRows.map((l) => [l.model, l.scope, lockoutReason(l), l.failureCount, Math.round(l.until / 1000)]),
      healthStore.connection(c.id) ?? null,
    ]);
  }

  /** The row's checkbox: the same element for the connection's whole stay in the list. */
  function updateBox(box: HTMLInputElement, c: ManagedConnection): void {
    const label = nameOf(c);
    const terminal = !isSelectable(c);
    const st = statusBadge(c.status, c.testStatus);
    box.setAttribute('aria-label', terminal ? `${label} is out of service (${st.label}) and cannot be cleared here` : `Select ${label}`);
    if (terminal) box.title = `${st.label}: ${st.description}`;
    else box.removeAttribute('title');
    box.checked = selected.has(c.id);
    box.disabled = terminal;
  }

  /** The health model's fixes of a connection as buttons (clear_cooldown is this page's own Clear). */
  function fixRow(m: ConnHealth, label: string): HTMLElement | null {
    const btns = fixButtons(
      { id: m.id, name: label, state: m.state, providerId: m.provider, locks: m.locks ?? [], ...(m.leaseId ? { leaseId: m.leaseId } : {}) },
      m.fixes,
      { signal: ctx.signal, message: summary, onDone: () => load(true) },
    );
    return btns.length ? h('div', { class: 'btn-row' }, btns, deniedNote(btns)) : null;
  }

  /** Fills a row's cells after its checkbox cell (kept), and its locked-models row. */
  function fillRow(r: RowEls, c: ManagedConnection): void {
    const label = nameOf(c);
    const st = statusBadge(c.status, c.testStatus);
    const terminal = !isSelectable(c);
    const now = Date.now();
    // The stable code when there is one (its sentence, with the code as a tag), else the kind.
    const errorType = (c.errorCode != null && c.errorCode !== '' ? String(c.errorCode) : '') || c.lastErrorType || '';
    const main = r.main;
    main.className = `conn-row${terminal ? ' row-terminal' : ''}`;
    main.setAttribute('data-testid', 'cooldown-row');
    main.setAttribute('data-status', String(c.status));
    while (main.lastChild && main.lastChild !== main.firstChild) main.lastChild.remove();
    append(main, [
      h(
        'th',
        { scope: 'row' },
        h('div', { class: 'cell-main' }, label),
        c.authType ? h('small', { class: 'muted block' }, AUTH_WORDS[c.authType] ?? c.authType) : null,
      ),
      h('td', null, h('span', { title: c.provider }, healthStore.connection(c.id)?.providerName || c.provider)),
      h(
        'td',
        { class: 'status-cell' },
        h('span', { 'data-testid': 'status-badge', title: st.description }, badge(st.label, st.tone)),
        c.lockoutRows.length ? h('small', { class: 'muted block' }, `${c.lockoutRows.length} model${c.lockoutRows.length === 1 ? '' : 's'} locked`) : null,
        // The health model's fixes, the same buttons as on every page.
        ...(() => {
          const m = healthStore.connection(c.id);
          if (!m) return [];
          if (m.state === 'leased' && !m.serving && m.leasedBy) {
            const until = m.until ? ` until ${formatDate(m.until)}` : '';
            return [h('small', { class: 'muted block', 'data-testid': 'leased-by' }, `held by ${m.leasedBy}${until}`), fixRow(m, label)];
          }
          return [fixRow(m, label)];
        })(),
      ),
      h(
        'td',
        null,
        c.until > now ? h('span', { class: 'block' }, countdown(c.until), ' left') : h('span', { class: 'muted' }, '—'),
        c.backoffLevel ? h('small', { class: 'muted block' }, `backoff level ${c.backoffLevel}`) : null,
      ),
      h(
        'td',
        null,
        errorType ? plainCode(errorType, 'error-type') : h('span', { class: 'muted' }, '—'),
        c.lastError ? h('small', { class: 'muted block truncate' }, upstreamWords(c.lastError)) : null,
        c.lastErrorAt ? h('small', { class: 'muted block' }, formatDate(c.lastErrorAt)) : null,
      ),
    ]);
    const sub = c.lockoutRows.length
      ? h(
          'tr',
          { class: 'lockout-subrow' },
          h('td', { class: 'select-col' }),
          h(
            'td',
            { colspan: String(COLUMNS - 1) },
            h('span', { class: 'visually-hidden' }, `Locked models of ${label}:`),
            h(
              'ul',
              { class: 'lockout-list', 'aria-label': `Locked models of ${label}` },
              c.lockoutRows.map((l) =>
                h(
                  'li',
                  { 'data-testid': 'lockout-item', 'data-model': l.model },
                  h('span', { class: 'lock-icon', 'aria-hidden': 'true' }, '⊘'),
                  h('code', null, l.model),
                  scopeBadge(l.scope),
                  lockoutReason(l) ? h('span', { class: 'error-type' }, lockoutReason(l)) : null,
                  l.failureCount ? h('span', { class: 'muted' }, `${l.failureCount} failure${l.failureCount === 1 ? '' : 's'}`) : null,
                  h('span', null, countdown(l.until, 'lockout-countdown'), ' left'),
                ),
              ),
            ),
            h('a', { class: 'small', href: href('/model-cooldowns') }, 'Reactivate single models on Model Cooldowns'),
          ),
        )
      : null;
    while (r.tbody.lastChild && r.tbody.lastChild !== main) r.tbody.lastChild.remove();
    if (sub) r.tbody.append(sub);
  }

  // ------------------------------------------------------------ clearing

  async function runClear(body: ClearCooldownsRequest, button: HTMLButtonElement, label: string): Promise<void> {
    clearing = true;
    summary.replaceChildren();
    await busy([clearSelectedBtn, clearProviderBtn, clearAllBtn], async () => {
      try {
        const res = await endpoints.clearCooldownsBy(body);
        if (ctx.signal.aborted) return;
        const text = clearSummary(res);
        const nothing = !(res?.cleared || res?.lockoutsCleared);
        summary.replaceChildren(
          h('div', { class: `alert alert-${nothing ? 'info' : 'success'}`, role: 'status', 'data-testid': 'clear-summary' }, text),
        );
        selected.clear();
        await load(true);
      } catch (err) {
        if (!ctx.signal.aborted) clear(summary, errorBox(err));
      }
    }, { button, label });
    clearing = false;
    if (!ctx.signal.aborted) updateActions(filterConnections(rows ?? [], { provider, statuses }));
    if (!button.disabled) button.focus();
    else heading.focus();
  }

  clearSelectedBtn.addEventListener('click', () => {
    const ids = [...selected];
    if (ids.length) void runClear({ connectionIds: ids }, clearSelectedBtn, 'Clearing…');
  });

  clearProviderBtn.addEventListener('click', async () => {
    if (!provider) return;
    const yes = await confirmDialog({
      title: `Clear every cooldown of ${provider}?`,
      message: `Every ${provider} connection that is cooling down or has a locked model is routed to again at once. Terminal connections are skipped.`,
      confirmLabel: 'Clear provider',
    });
    if (yes) void runClear({ all: true, provider }, clearProviderBtn, 'Clearing…');
    else clearProviderBtn.focus();
  });

  clearAllBtn.addEventListener('click', async () => {
    const yes = await confirmDialog({
      title: 'Clear every cooldown?',
      message: 'Every connection that is cooling down or has a locked model is routed to again at once. Terminal connections are skipped.',
      confirmLabel: 'Clear all',
    });
    if (yes) void runClear({ all: true }, clearAllBtn, 'Clearing…');
    else clearAllBtn.focus();
  });

  refreshBtn.addEventListener('click', () => {
    summary.replaceChildren();
    void load();
  });

  // ------------------------------------------------------------ live

  const ticker = window.setInterval(() => {
    if (!rows) return;
    const now = Date.now();
    const next = tickConnections(rows, now);
    if (next !== rows) {
      rows = next;
      renderList();
      return;
    }
    for (const el of listArea.querySelectorAll<HTMLElement>('[data-until]')) el.textContent = formatCountdown(Number(el.dataset['until']) - now);
  }, 1000);

  const cleanups: Array<() => void> = [
    () => window.clearInterval(ticker),
    () => window.clearTimeout(refetchTimer),
    rules.cleanup,
    live.subscribe('connection', (ev) => {
      if (!rows) {
        scheduleRefetch(); // the first load may have been answered before this change
        return;
      }
      const next = applyConnectionEventToRow(rows, ev.data, Date.now());
      if (next) {
        rows = next;
        renderList();
      }
      scheduleRefetch();
    }),
    // A provider breaker opening or closing changes who is out of routing.
    live.subscribe('breaker', () => scheduleRefetch()),
    // A lease taken or released changes who serves: the rows follow the health model.
    live.subscribe('lease', () => scheduleRefetch()),
    (() => {
      let sig = '';
      return healthStore.subscribe((r) => {
        const next = (r.connections ?? []).map((x) => `${x.id}=${x.state}:${(x.fixes ?? []).join('+')}`).join(',');
        if (next === sig) return;
        sig = next;
        if (!rows) return;
        // The health model's state wins: no row keeps a state the model does not say.
        const now = Date.now();
        rows = rows.map((x) => {
          const m = healthStore.connection(x.id);
          const reported = m ? toHealthState(m.state) : x.reported;
          if (reported === x.reported) return x;
          const updated = { ...x, reported, health: m ?? null, until: stateInfo(reported).timed ? (instant(m?.until) ?? x.until) : x.until };
          updated.status = deriveStatus(updated, now);
          return updated;
        });
        renderList();
      });
    })(),
    live.subscribe('lockout', (ev) => {
      if (!rows) {
        scheduleRefetch(); // the first load may have been answered before this change
        return;
      }
      const i = rows.findIndex((r) => r.id === ev.data.connectionId);
      if (i >= 0) {
        const now = Date.now();
        const r = rows[i]!;
        const res = applyLockoutEvent(r.lockoutRows, ev.data, now, new Map([[r.id, nameOf(r)]]));
        if (res.changed) {
          const updated = { ...r, lockoutRows: res.rows };
          updated.status = deriveStatus(updated, now);
          rows = rows.map((x, j) => (j === i ? updated : x));
          renderList();
        }
      }
      scheduleRefetch();
    }),
    (() => {
      let wasOpen = live.getStatus().state === 'open';
      return live.onStatus((s) => {
        const open = s.state === 'open';
        if (open && !wasOpen && rows !== null) void load(true);
        wasOpen = open;
      });
    })(),
  ];

  // The actions start as the role and the (still empty) list allow: never
  // enabled for a viewer while the first load is on its way.
  updateActions([]);
  void load();
  return () => cleanups.forEach((fn) => fn());
}

// ---------------------------------------------------------------- cooldown rules

/** The small form for the most-tuned cooldown rules; the full list is on Resilience Settings. */
function renderRules(ctx: ViewContext): { element: HTMLElement; cleanup: () => void } {
  let baseline: ResilienceSettings | null = null;
  let fields: FieldSpec[] = [];
  let saving = false;
  let submitted = false;
  const inputs = new Map<string, HTMLInputElement>();
  const slots = new Map<string, HTMLElement>();
  const hints = new Map<string, HTMLElement>();
  const touched = new Set<string>();
  const idFor = (key: string) => `cdr-${key.replace(/[^A-Za-z0-9]+/g, '-')}`;

  const body = h('div', { class: 'list-area' }, loading('Loading cooldown rules…'));
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const saveBtn = h('button', { type: 'submit', class: 'btn btn-primary btn-small' }, 'Save rules');
  const element = h(
    'section',
    { class: 'card rules-card', 'aria-labelledby': 'cd-rules-title' },
    h('h2', { id: 'cd-rules-title' }, 'Cooldown rules'),
    h('p', { class: 'muted small' }, 'The rules people tune most. Every other setting is on ', h('a', { href: href('/resilience') }, 'Resilience Settings'), '.'),
    body,
  );

  function raw(): Map<string, string | boolean> {
    const m = new Map<string, string | boolean>();
    for (const [k, el] of inputs) m.set(k, el.type === 'checkbox' ? el.checked : el.value);
    return m;
  }

  function check(): { patch: ResilienceSettings; errors: Map<string, string> } {
    const { values, errors } = validate(fields, raw());
    for (const f of fields) {
      if (errors.has(f.key)) continue;
      const msg = ruleRangeError(f.key, getAt(values, f.path));
      if (msg) errors.set(f.key, msg);
    }
    for (const f of fields) {
      const el = inputs.get(f.key)!;
      setFieldError(el, slots.get(f.key)!, submitted || touched.has(f.key) ? (errors.get(f.key) ?? null) : null);
    }
    const ok = new Set(fields.filter((f) => !errors.has(f.key)).map((f) => f.key));
    return { patch: baseline ? diffToPatch(baseline, values, fields.filter((f) => ok.has(f.key))) : {}, errors };
  }

  function renderForm(): void {
    if (!baseline) return;
    const all = allFields(buildSections(baseline));
    fields = RULE_KEYS.map((k) => all.find((f) => f.key === k)).filter((f): f is FieldSpec => Boolean(f));
    inputs.clear();
    slots.clear();
    hints.clear();
    touched.clear();
    submitted = false;
    if (!fields.length) {
      clear(body, emptyState('These rules are not in this gateway’s settings.'));
      return;
    }
    const form = h(
      'form',
      { class: 'rules-form', novalidate: true, 'aria-labelledby': 'cd-rules-title' },
      h(
        'div',
        { class: 'form-grid form-grid-rules' },
        fields.map((f) => {
          const id = idFor(f.key);
          const value = getAt(baseline ?? {}, f.path);
          const slot = h('small', { id: `${id}-error`, class: 'field-error' });
          slots.set(f.key, slot);
          const label = RULE_LABELS[f.key as keyof typeof RULE_LABELS] ?? f.label;
          if (f.kind === 'boolean') {
            const input = h('input', { id, type: 'checkbox', 'data-key': f.key });
            input.checked = value === true;
            inputs.set(f.key, input);
            return h('div', { class: 'field field-check field-wide' }, h('label', { for: id }, input, ' ', label), slot);
          }
          const input = h('input', { id, type: 'text', inputmode: f.isMs ? 'decimal' : 'numeric', autocomplete: 'off', 'data-key': f.key, 'aria-describedby': `${id}-hint` });
          input.value = formatValue(f.kind, value, f.isMs);
          inputs.set(f.key, input);
          const hint = h('small', { id: `${id}-hint`, class: 'hint' }, hintFor(f, input.value));
          hints.set(f.key, hint);
          return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint, slot);
        }),
      ),
      h('div', { class: 'form-actions' }, saveBtn),
      status,
    );
    gateForm(form, 'PATCH /api/resilience', 'Changing these rules');
    form.addEventListener('input', (ev) => {
      const key = (ev.target as HTMLElement).dataset['key'];
      const f = fields.find((x) => x.key === key);
      if (f && hints.has(f.key)) hints.get(f.key)!.textContent = hintFor(f, (ev.target as HTMLInputElement).value);
      status.replaceChildren();
      check();
    });
    form.addEventListener('change', (ev) => {
      const key = (ev.target as HTMLElement).dataset['key'];
      if (key) touched.add(key);
      check();
    });
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void save();
    });
    clear(body, form);
  }

  async function load(): Promise<void> {
    try {
      const doc = await endpoints.getResilience(ctx.signal);
      if (ctx.signal.aborted) return;
      baseline = doc;
      renderForm();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(body, errorBox(err, () => void load()));
    }
  }

  async function save(): Promise<void> {
    if (!baseline || saving) return;
    submitted = true;
    status.replaceChildren();
    const { patch, errors } = check();
    if (errors.size) {
      clear(status, h('p', { class: 'form-error', role: 'alert' }, `Fix ${errors.size} field${errors.size === 1 ? '' : 's'} before saving.`));
      inputs.get(fields.find((f) => errors.has(f.key))!.key)?.focus();
      return;
    }
    const n = countLeaves(patch);
    if (!Object.keys(patch).length) {
      clear(status, notice('No changes to save.', 'info'));
      return;
    }
    saving = true;
    const outcome = await saveResilience(patch, [saveBtn], saveBtn);
    saving = false;
    if (ctx.signal.aborted) return;
    if ('err' in outcome) {
      const err = outcome.err;
      const f = err instanceof ApiError ? fieldForParam(err.param, fields) : undefined;
      if (err instanceof ApiError && f) {
        setFieldError(inputs.get(f.key)!, slots.get(f.key)!, `${err.message} (${err.code})`);
        inputs.get(f.key)!.focus();
        clear(status, h('p', { class: 'form-error', role: 'alert' }, 'The gateway rejected a value; see the highlighted field.'));
      } else {
        clear(status, errorBox(err));
      }
      return;
    }
    if (outcome.saved && typeof outcome.saved === 'object') baseline = outcome.saved;
    renderForm();
    clear(status, h('div', { class: 'alert alert-success', role: 'status', 'data-testid': 'rules-saved' }, `Saved ${n} change${n === 1 ? '' : 's'}.`));
    saveBtn.focus();
  }

  function isDirty(): boolean {
    if (!baseline || !fields.length) return false;
    const { values, errors } = validate(fields, raw());
    return errors.size > 0 || Object.keys(diffToPatch(baseline, values, fields)).length > 0;
  }

  const unsubscribe = live.subscribe('settings', async (ev) => {
    if (ev.data.section !== 'resilience' || saving || !baseline || isDirty()) return;
    try {
      const doc = await endpoints.getResilience(ctx.signal);
      if (ctx.signal.aborted || saving || isDirty() || JSON.stringify(doc) === JSON.stringify(baseline)) return;
      baseline = doc;
      const keep = status.firstChild ? [...status.childNodes] : [];
      renderForm();
      status.replaceChildren(...keep);
    } catch {
      /* shown on the next load */
    }
  });

  void load();
  return { element, cleanup: unsubscribe };
}
