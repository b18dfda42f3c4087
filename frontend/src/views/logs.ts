import { endpoints, isAbortError, type ApiKey, type AttemptLog, type LogFilter, type RequestLog } from '../api';
import { plainCode, sentence } from '../lib/words';
import { badge, clear, emptyState, errorBox, formatDate, formatTime, h, loading, parseTime } from '../dom';
import { formatDuration } from '../lib/format';
import type { IsoRange } from '../lib/daterange';
import { dateRangeFields } from './date-range';
import { costCell, keyCell, replayHref, tokensCell } from '../lib/logrow';
import { live } from '../live';
import { queueNote } from '../lib/concurrency';
import type { ViewContext } from '../router';
import { openBodies } from './bodies';
import { failureFixes } from './failure-fixes';
import { healthStore } from '../lib/healthmodel';
import { renderCaptureSettings } from './capture-settings';
import { canSend, gateWrites } from './role-gate';
import { canSetPrice, priceFixLink } from './pricing';

const LIMIT = 100;
/** The gateway writes request logs in batches (about once a second). */
const DETAIL_REFRESH_MS = 1500;

export type StatusFilter = 'all' | 'ok' | 'error';

export const isOkStatus = (status: number): boolean => status >= 200 && status < 400;

export function filterLogs(logs: readonly RequestLog[], filter: StatusFilter): RequestLog[] {
  if (filter === 'all') return [...logs];
  return logs.filter((l) => isOkStatus(l.status) === (filter === 'ok'));
}

const isStep = (a: AttemptLog) => a.verdict === 'wait' || a.verdict === 'excluded';
const lastAttempt = (l: RequestLog): AttemptLog | undefined => (Array.isArray(l.attempts) ? l.attempts.filter((a) => !isStep(a)).at(-1) : undefined);

/** Why routing left a target out, in words. */
export const EXCLUSION_TEXT: Record<string, string> = {
  model_lockout: 'model locked on this connection',
  circuit_open: 'provider circuit breaker open',
  connection_cooldown: 'connection cooling down',
  provider_cooldown: 'provider cooling down',
  unavailable: 'out of service',
  lease_held: 'leased to another session',
};

/** The time ranges Logs offers: how far back from now (ms; 0: everything kept). */
export const LOG_RANGES: ReadonlyArray<{ value: string; label: string; ms: number }> = [
  { value: 'all', label: 'All kept', ms: 0 },
  { value: '15m', label: 'Last 15 min', ms: 15 * 60_000 },
  { value: 'hour', label: 'Last hour', ms: 3_600_000 },
  { value: 'day', label: 'Last day', ms: 86_400_000 },
  { value: 'week', label: 'Last week', ms: 7 * 86_400_000 },
  { value: 'custom', label: 'Custom…', ms: 0 },
];

/** The from= of a range at now ("" for everything kept). */
export function rangeFrom(range: string, now = Date.now()): string {
  const r = LOG_RANGES.find((x) => x.value === range);
  return r && r.ms > 0 ? new Date(now - r.ms).toISOString() : '';
}

/** The time a row shows and the log is ordered by: when the request finished. */
export function rowTime(l: Pick<RequestLog, 'finishedAt' | 'createdAt' | 'latencyMs'>): string | null {
  if (l.finishedAt) return l.finishedAt;
  if (!l.createdAt) return null;
  const t = Date.parse(l.createdAt);
  return Number.isFinite(t) ? new Date(t + (l.latencyMs ?? 0)).toISOString() : l.createdAt;
}

/** Does a log row match the server-side filters (for rows prepended live)? */
export function matchesFilter(l: Pick<RequestLog, 'connectionId' | 'model' | 'apiKeyId'>, f: LogFilter): boolean {
  return (!f.connectionId || l.connectionId === f.connectionId) && (!f.model || l.model === f.model) && (!f.keyId || l.apiKeyId === f.keyId);
}

/** Timeline geometry: each step as [left %, width %] of the request's span. */
export function timelineSpans(steps: readonly AttemptLog[]): Array<{ left: number; width: number }> {
  const end = Math.max(1, ...steps.map((a) => (a.startMs ?? 0) + (a.latencyMs ?? 0)));
  return steps.map((a) => ({ left: ((a.startMs ?? 0) / end) * 100, width: Math.max(0.8, ((a.latencyMs ?? 0) / end) * 100) }));
}

/** Today's requests show the time to the second; older ones the date too. */
function logTime(at: string | null | undefined): HTMLElement | string {
  const d = parseTime(at);
  if (!d) return '—';
  const today = new Date().toDateString() === d.toDateString();
  return h('time', { datetime: d.toISOString(), title: d.toLocaleString() }, today ? formatTime(d) : formatDate(at));
}

/** A row's Key, Tokens and Cost cells (the key by name, never its secret); a row announced live has them a moment later. */
export function usageCells(l: RequestLog, keyNames: ReadonlyMap<string, string>, pending = false): HTMLElement[] {
  const soon = { text: '…', title: 'Arrives with the log row in a moment' };
  const key = pending ? soon : keyCell(l.apiKeyId, keyNames);
  const tokens = pending ? soon : tokensCell(l);
  const cost = pending ? soon : costCell(l);
  return [
    h('td', { class: 'log-key', 'data-testid': 'log-key', title: key.title }, key.text),
    h('td', { class: 'num nowrap', 'data-testid': 'log-tokens', title: tokens.title }, tokens.text),
    h('td', { class: 'num nowrap', 'data-testid': 'log-cost', title: cost.title }, cost.text),
  ];
}

/** “Replay”: the Playground with the row's model and, when its body was captured, its messages; null without a model. */
export function replayLink(l: RequestLog): HTMLElement | null {
  const href = replayHref(l);
  if (!href) return null;
  return h(
    'a',
    {
      href,
      class: 'btn btn-small btn-ghost',
      'data-testid': 'replay-button',
      'aria-label': `Replay the ${l.model || ''} request at ${formatDate(l.createdAt)} in the Playground`,
      title: l.hasBodies ? 'Open the Playground with this model and these messages' : 'Open the Playground with this model (the body was not captured)',
    },
    'Replay',
  );
}

interface Row extends RequestLog {
  /** Prepended from a live event; the attempt list arrives with the next fetch. */
  live?: boolean;
}

export function renderLogs(root: HTMLElement, ctx: ViewContext): () => void {
  let logs: Row[] | null = null;
  const names = new Map<string, string>();
  const expanded = new Set<string>();
  let filter: StatusFilter = (['ok', 'error'] as const).find((f) => f === ctx.params.get('status')) ?? 'all';
  let refreshTimer = 0;
  let pendingRounds = 0;
  const serverFilter: LogFilter = {
    ...(ctx.params.get('connectionId') ? { connectionId: ctx.params.get('connectionId')! } : {}),
    ...(ctx.params.get('model') ? { model: ctx.params.get('model')! } : {}),
    ...(ctx.params.get('keyId') ? { keyId: ctx.params.get('keyId')! } : {}),
  };
  let keys: ApiKey[] = [];
  const keyNames = new Map<string, string>();
  /** The Playground is for admins: others see no Replay. */
  const canReplay = canSend('POST /api/playground/');
  // Paging: the page shown is the newest (no cursor), or older than before,
  // or newer than after; the answer's cursors lead on.
  let cursor: { before?: number; after?: number } = {};
  let nextBefore: number | undefined;
  let newerAfter: number | undefined;
  let range = LOG_RANGES.some((r) => r.value === ctx.params.get('range')) ? ctx.params.get('range')! : 'all';
  const searchInput = h('input', { id: 'log-search', type: 'search', placeholder: 'Search model, key, connection, code…', autocomplete: 'off', spellcheck: 'false' });
  searchInput.value = ctx.params.get('q') ?? '';
  // A custom range: from= / to= of GET /api/logs (when the request finished).
  let custom: IsoRange | null = range === 'custom' && ctx.params.get('from') ? { from: ctx.params.get('from')!, to: ctx.params.get('to') ?? '' } : null;
  const picker = dateRangeFields('logs', (r) => {
    custom = r;
    onSearch();
  });
  if (custom) picker.set(custom);
  picker.show(range === 'custom');
  const rangeSelect = h('select', { id: 'log-range', 'aria-label': 'Time range' }, LOG_RANGES.map((r) => h('option', { value: r.value, selected: r.value === range }, r.label)));
  const olderBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'logs-older' }, 'Older ›');
  const newerBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'logs-newer' }, '‹ Newer');
  const newestBtn = h('button', { type: 'button', class: 'btn btn-small btn-ghost' }, 'Newest');
  const exportCsv = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'logs-export-csv' }, 'Export CSV');
  const exportJson = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'logs-export-json' }, 'Export JSON');
  const pageNote = h('span', { class: 'muted small' });
  /** The filters of the list and of an export: server-side ones, search and range. */
  function fullFilter(): LogFilter {
    const f: LogFilter = { ...serverFilter };
    if (filter !== 'all') f.status = filter;
    const q = searchInput.value.trim();
    if (q) f.q = q;
    const from = rangeFrom(range);
    if (from) f.from = from;
    if (range === 'custom' && custom) {
      f.from = custom.from;
      if (custom.to) f.to = custom.to;
    }
    return f;
  }
  const onSearch = () => {
    cursor = {};
    syncUrl();
    void load();
  };
  searchInput.addEventListener('change', onSearch);
  rangeSelect.addEventListener('change', () => {
    range = rangeSelect.value;
    picker.show(range === 'custom');
    if (range === 'custom' && !custom) {
      picker.el.querySelector<HTMLInputElement>('input')?.focus();
      return; // the list changes when the range is applied
    }
    onSearch();
  });
  olderBtn.addEventListener('click', () => {
    if (nextBefore === undefined) return;
    cursor = { before: nextBefore };
    void load();
  });
  newerBtn.addEventListener('click', () => {
    cursor = newerAfter !== undefined ? { after: newerAfter } : {};
    void load();
  });
  newestBtn.addEventListener('click', () => {
    cursor = {};
    void load();
  });
  async function doExport(format: 'csv' | 'json'): Promise<void> {
    const btn = format === 'csv' ? exportCsv : exportJson;
    btn.disabled = true;
    try {
      const text = await endpoints.exportLogs(format, fullFilter());
      const url = URL.createObjectURL(new Blob([text], { type: format === 'csv' ? 'text/csv' : 'application/json' }));
      const a = h('a', { href: url, download: `omniroute-logs.${format}` });
      document.body.append(a);
      a.click();
      a.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      pageNote.textContent = err instanceof Error ? err.message : 'Export failed';
    } finally {
      btn.disabled = false;
    }
  }
  exportCsv.addEventListener('click', () => void doExport('csv'));
  exportJson.addEventListener('click', () => void doExport('json'));
  const connSelect = h('select', { id: 'log-conn' }, h('option', { value: '' }, 'All connections'));
  const keySelect = h('select', { id: 'log-key' }, h('option', { value: '' }, 'All keys'));
  const modelInput = h('input', { id: 'log-model', list: 'log-models', placeholder: 'All models', autocomplete: 'off', spellcheck: 'false' });
  const modelList = h('datalist', { id: 'log-models' });
  modelInput.value = serverFilter.model ?? '';
  function syncUrl(): void {
    const q = new URLSearchParams();
    if (filter !== 'all') q.set('status', filter);
    for (const [k, v] of Object.entries(serverFilter)) if (v) q.set(k, v);
    if (searchInput.value.trim()) q.set('q', searchInput.value.trim());
    if (range !== 'all') q.set('range', range);
    if (range === 'custom' && custom) {
      q.set('from', custom.from);
      if (custom.to) q.set('to', custom.to);
    }
    history.replaceState(history.state, '', `#/logs${q.size ? `?${q}` : ''}`);
  }
  function onFilter(): void {
    for (const [k, el] of [['connectionId', connSelect], ['keyId', keySelect], ['model', modelInput]] as const) {
      const v = el.value.trim();
      if (v) serverFilter[k] = v;
      else delete serverFilter[k];
    }
    syncUrl();
    void load();
  }
  connSelect.addEventListener('change', onFilter);
  keySelect.addEventListener('change', onFilter);
  modelInput.addEventListener('change', onFilter);

  const heading = h('h1', { tabindex: '-1' }, 'Logs');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const listArea = h('div', { class: 'list-area' });
  const countLine = h('p', { class: 'muted small', 'aria-live': 'polite' });

  const radios = (['all', 'ok', 'error'] as const).map((value) => {
    const input = h('input', { type: 'radio', name: 'log-status', id: `log-status-${value}`, value });
    input.checked = value === filter;
    input.addEventListener('change', () => {
      if (!input.checked) return;
      filter = value;
      cursor = {};
      syncUrl();
      void load();
    });
    return h('label', { class: 'seg', for: input.id }, input, { all: 'All', ok: 'OK', error: 'Errors' }[value]);
  });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h(
      'p',
      { class: 'muted page-intro' },
      `Requests through the gateway, ${LIMIT} a page, newest first by the time they finished; new ones appear at the top as they finish. Search, pick a time range, page to older ones, or export what the filters select. Expand a row to see each attempt, its verdict and the upstream's own words.`,
    ),
    h(
      'div',
      { class: 'usage-toolbar log-filters' },
      h('fieldset', { class: 'segmented' }, h('legend', { class: 'visually-hidden' }, 'Show requests'), radios),
      h('label', { class: 'inline-field', for: connSelect.id }, 'Connection ', connSelect),
      h('label', { class: 'inline-field', for: modelInput.id }, 'Model ', modelInput, modelList),
      h('label', { class: 'inline-field', for: keySelect.id }, 'Key ', keySelect),
      h('label', { class: 'inline-field', for: searchInput.id }, 'Search ', searchInput),
      h('label', { class: 'inline-field', for: rangeSelect.id }, 'Time ', rangeSelect),
      countLine,
    ),
    picker.el,
    h('div', { class: 'log-pager', role: 'group', 'aria-label': 'Pages and export' }, newestBtn, newerBtn, olderBtn, pageNote, exportCsv, exportJson),
    renderCaptureSettings(ctx.signal),
    h('section', { 'aria-labelledby': 'logs-title' }, h('h2', { id: 'logs-title', class: 'visually-hidden' }, 'Request log'), listArea),
  );

  async function load(quiet = false): Promise<void> {
    if (!quiet || logs === null) clear(listArea, loading('Loading request logs…'));
    refreshBtn.disabled = true;
    try {
      const [page, conns, keyList] = await Promise.all([
        endpoints.logPage(LIMIT, ctx.signal, fullFilter(), cursor),
        names.size ? Promise.resolve(null) : endpoints.listConnections(ctx.signal).catch(() => null),
        keys.length ? Promise.resolve(null) : endpoints.listKeys(ctx.signal).catch(() => null),
      ]);
      if (ctx.signal.aborted) return;
      const list = page.logs;
      nextBefore = page.nextBefore;
      newerAfter = page.newerAfter;
      // The newest page has no newer rows; an after= page that came back
      // short is the newest too.
      const atNewest = !cursor.before && !(cursor.after && newerAfter !== undefined);
      if (atNewest) cursor = {};
      olderBtn.disabled = nextBefore === undefined;
      newerBtn.disabled = atNewest;
      newestBtn.disabled = atNewest;
      pageNote.textContent = atNewest ? '' : 'Older requests — live updates paused on this page';
      for (const c of conns ?? []) names.set(c.id, c.name || c.provider);
      if (conns) {
        connSelect.replaceChildren(
          h('option', { value: '' }, 'All connections'),
          ...conns.map((c) => h('option', { value: c.id, selected: c.id === serverFilter.connectionId }, c.name || c.id)),
        );
      }
      if (keyList) {
        keys = keyList;
        for (const k of keys) if (k.name) keyNames.set(k.id, k.name);
        keySelect.replaceChildren(h('option', { value: '' }, 'All keys'), ...keys.map((k) => h('option', { value: k.id, selected: k.id === serverFilter.keyId }, k.name || k.id)));
      }
      const models = new Set([...(modelList.options ? [...modelList.options].map((o) => o.value) : []), ...list.map((l) => l.model ?? '').filter(Boolean)]);
      modelList.replaceChildren(...[...models].sort().map((m) => h('option', { value: m })));
      // Live rows the server has not written yet stay until it has.
      const fetched = new Set(list.map((l) => l.requestId));
      const pending = atNewest ? (logs ?? []).filter((l) => l.live && !fetched.has(l.requestId)) : [];
      logs = [...pending, ...list].slice(0, LIMIT);
      renderList();
      // Poll a few times for rows announced live but not written yet, then stop.
      pendingRounds = pending.length ? pendingRounds + 1 : 0;
      if (pending.length && pendingRounds < 5) scheduleRefresh();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      refreshBtn.disabled = false;
    }
  }

  function scheduleRefresh(): void {
    window.clearTimeout(refreshTimer);
    refreshTimer = window.setTimeout(() => void load(true), DETAIL_REFRESH_MS);
  }

  function renderList(): void {
    const focusKey = (document.activeElement as HTMLElement | null)?.dataset?.['focusKey'];
    const all = logs ?? [];
    const shown = filterLogs(all, filter);
    countLine.textContent = logs ? `${shown.length} ${shown.length === 1 ? 'request' : 'requests'} on this page` : '';
    if (shown.length === 0) {
      clear(
        listArea,
        all.length === 0
          ? emptyState('No requests yet', 'Requests to /v1 appear here as they finish.')
          : emptyState(filter === 'ok' ? 'No successful requests among these' : 'No failed requests among these', 'Choose “All” to see every request.'),
      );
      return;
    }
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table logs-table', 'data-testid': 'logs-table' },
          h('caption', { class: 'visually-hidden' }, 'Requests, newest first'),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Attempts')),
              ['Finished', 'Model', 'Key', 'Connection', 'Status', 'Tokens', 'Cost', 'Latency', 'Queue', 'Upstream', 'Error'].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          shown.map(renderRow),
        ),
      ),
    );
    if (focusKey) listArea.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
  }

  function connectionName(id: string | undefined, provider: string | undefined): string {
    // By name (the health model's for a connection not in the list), never a hex id.
    if (id) return names.get(id) ?? healthStore.connection(id)?.name ?? 'a deleted connection';
    return provider || '—';
  }

  function renderRow(l: Row): HTMLElement {
    const key = l.requestId || String(l.id);
    const isOpen = expanded.has(key);
    const detailId = `log-${key}-attempts`;
    const count = l.attemptCount ?? (Array.isArray(l.attempts) ? l.attempts.length : 0);
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'btn btn-small btn-ghost expander',
        'aria-expanded': String(isOpen),
        'aria-controls': detailId,
        'aria-label': `${isOpen ? 'Hide' : 'Show'} attempts of the ${l.model || ''} request at ${formatDate(l.createdAt)} (${count} ${count === 1 ? 'attempt' : 'attempts'})`,
        title: `${count} ${count === 1 ? 'attempt' : 'attempts'}`,
        'data-focus-key': `${key}:toggle`,
      },
      h('span', { 'aria-hidden': 'true' }, isOpen ? '▾' : '▸'),
      // The attempt count rides on the expander: one column fewer for Key, Tokens and Cost.
      h('span', { class: 'attempt-count', 'data-testid': 'attempt-count', 'aria-hidden': 'true' }, String(count)),
    );
    toggle.addEventListener('click', () => {
      if (expanded.has(key)) expanded.delete(key);
      else expanded.add(key);
      renderList();
    });
    const ok = isOkStatus(l.status);
    const [keyTd, tokensTd, costTd] = usageCells(l, keyNames, Boolean(l.live));
    // Each request is its own <tbody> so the detail row stays with its row.
    return h(
      'tbody',
      { class: l.live ? 'log-live' : null, 'data-request-id': key },
      h(
        'tr',
        null,
        h('td', null, toggle),
        h('td', { class: 'nowrap' }, logTime(rowTime(l))),
        h(
          'td',
          null,
          h('code', { class: 'model-name' }, l.model || '—'),
          l.stream ? h('span', { class: 'chip chip-inline' }, 'stream') : null,
          l.hasBodies ? bodiesButton(l) : null,
          canReplay ? replayLink(l) : null,
        ),
        keyTd!,
        // A failed request names no connection; its last attempt does. A
        // refusal reached none: it says so instead of naming a connection.
        h(
          'td',
          null,
          !l.connectionId && !lastAttempt(l) && !ok
            ? h('span', { class: 'muted', title: 'Refused before any connection was tried: see the attempts for why' }, 'not sent (refused)')
            : connectionName(l.connectionId || lastAttempt(l)?.connectionId, l.provider || lastAttempt(l)?.provider),
        ),
        h('td', null, badge(String(l.status), ok ? 'ok' : 'bad')),
        tokensTd!,
        costTd!,
        h('td', { class: 'num' }, l.latencyMs != null ? h('span', { title: `${l.latencyMs} ms` }, formatDuration(l.latencyMs)) : '—'),
        h(
          'td',
          { class: 'num', 'data-testid': 'queue-time', title: queueNote(l.queueMs, l.queueReason) || 'went straight to the upstream' },
          l.queueMs ? formatDuration(l.queueMs) : '—',
          queueNote(l.queueMs, l.queueReason) ? h('small', { class: 'muted block' }, queueNote(l.queueMs, l.queueReason)) : null,
        ),
        h('td', { class: 'num' }, l.upstreamMs != null ? formatDuration(l.upstreamMs) : '—'),
        h(
          'td',
          { class: 'log-error' },
          l.errorCode ? plainCode(l.errorCode, 'error-type') : h('span', { class: 'muted' }, '—'),
          l.errorCode === 'MODEL_PRICE_UNKNOWN' && canSetPrice() ? [' ', priceFixLink(l.model ?? '', l.connectionId || undefined)] : null,
        ),
      ),
      isOpen ? h('tr', { class: 'detail-row', id: detailId }, h('td', { colspan: '12' }, renderAttempts(l), ...rowFixes(l))) : null,
    );
  }

  /** A failed row's fixes and links to its connections (views/failure-fixes.ts), with where their outcome shows. */
  function rowFixes(l: Row): HTMLElement[] {
    const message = h('div', { role: 'status' });
    const block = failureFixes(l, { signal: ctx.signal, message, onDone: () => renderList() });
    return block ? [block, message] : [];
  }

  function bodiesButton(l: Row): HTMLElement {
    const btn = h(
      'button',
      { type: 'button', class: 'btn btn-small btn-ghost', 'aria-label': `Bodies of the ${l.model || ''} request at ${formatDate(l.createdAt)}`, 'data-testid': 'bodies-button' },
      'Bodies',
    );
    btn.addEventListener('click', () => openBodies(l.requestId));
    gateWrites([[btn, 'GET /api/logs/{requestId}/bodies']]); // people's prompts and answers: admins only
    return btn;
  }

  function renderAttempts(l: Row): HTMLElement {
    const all: AttemptLog[] = Array.isArray(l.attempts) ? l.attempts : [];
    const excluded = all.filter((a) => a.verdict === 'excluded');
    const attempts = all.filter((a) => a.verdict !== 'excluded');
    if (attempts.length === 0 && excluded.length === 0) {
      return h('p', { class: 'muted small' }, l.live ? 'Attempt details arrive in a moment…' : 'No upstream attempt was made (the request was refused before routing: key, model name or gateway state).');
    }
    const exclusions = excluded.length
      ? h(
          'div',
          { class: 'exclusions', 'data-testid': 'exclusions' },
          h('p', { class: 'small' }, attempts.length ? 'Then routing had nothing left; every other target was excluded:' : 'Refused by routing: every target was excluded.'),
          h(
            'ul',
            { class: 'small' },
            excluded.map((x) =>
              h(
                'li',
                null,
                h('strong', null, connectionName(x.connectionId, x.provider)),
                ' ',
                h('code', null, x.model || ''),
                ' — ',
                h('span', { 'data-testid': 'exclusion-reason', title: x.code ?? '' }, EXCLUSION_TEXT[x.code ?? ''] ?? (sentence(x.code) || 'excluded')),
                x.detail ? ` (${x.detail})` : '',
                x.remainingMs ? h('span', { class: 'muted', title: `${x.remainingMs} ms` }, ` · for ${formatDuration(x.remainingMs)} more`) : '',
              ),
            ),
          ),
        )
      : null;
    if (attempts.length === 0) return h('div', null, exclusions);
    const spans = timelineSpans(attempts);
    const timeline = h(
      'ol',
      { class: 'attempt-timeline', 'aria-label': 'Attempt timeline', 'data-testid': 'attempt-timeline' },
      attempts.map((a, i) => {
        const wait = a.verdict === 'wait';
        const tone = wait ? 'wait' : a.status && isOkStatus(a.status) ? 'ok' : 'bad';
        const label = wait ? `waited ${formatDuration(a.latencyMs ?? 0)} for a cooldown` : `${connectionName(a.connectionId, a.provider)}: ${a.verdict ?? ''} after ${formatDuration(a.latencyMs ?? 0)}`;
        return h(
          'li',
          { class: 'tl-step' },
          h('span', { class: 'tl-label small' }, label),
          h('span', { class: 'tl-track', 'aria-hidden': 'true' }, h('span', { class: `tl-bar tl-${tone}`, style: `left:${spans[i]!.left}%;width:${spans[i]!.width}%`, title: label })),
        );
      }),
    );
    return h('div', { class: 'attempts-detail' }, timeline, renderAttemptTable(attempts), exclusions);
  }

  function renderAttemptTable(attempts: AttemptLog[]): HTMLElement {
    let prevEnd = 0;
    return h(
      'table',
      { class: 'table table-inner' },
      h('caption', { class: 'visually-hidden' }, 'Attempts in order'),
      h('thead', null, h('tr', null, ['#', 'Target', 'Model', 'Status', 'Verdict', 'What happened', 'Wait', 'Duration'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        null,
        attempts.map((a, i) => {
          const start = a.startMs ?? prevEnd;
          const wait = Math.max(0, start - prevEnd);
          prevEnd = start + (a.latencyMs ?? 0);
          return h(
            'tr',
            null,
            h('td', { class: 'num' }, i + 1),
            h('td', null, connectionName(a.connectionId, a.provider)),
            h('td', null, h('code', null, a.model || '—')),
            h('td', null, a.status ? badge(String(a.status), isOkStatus(a.status) ? 'ok' : 'bad') : '—'),
            h('td', null, a.verdict ? h('span', { class: 'verdict', 'data-testid': 'verdict' }, a.verdict) : '—'),
            h(
              'td',
              null,
              a.code ? plainCode(a.code, 'error-type') : '—',
              a.detail ? h('small', { class: 'muted block', 'data-testid': 'attempt-detail' }, a.detail) : null,
            ),
            h('td', { class: 'num' }, wait ? h('span', { title: `${wait} ms` }, formatDuration(wait)) : '—'),
            h('td', { class: 'num' }, a.latencyMs != null ? h('span', { title: `${a.latencyMs} ms` }, formatDuration(a.latencyMs)) : '—'),
          );
        }),
      ),
    );
  }

  const unsubscribe = live.subscribe('request', (ev) => {
    if (!logs) return;
    // Live rows go on the newest page, unfiltered by search or time range.
    if (cursor.before || cursor.after || searchInput.value.trim() || range !== 'all') return;
    const d = ev.data;
    if (logs.some((l) => l.requestId === d.requestId)) return;
    // A live event does not name its key: with a key filter, the next refresh decides.
    if (serverFilter.keyId) return;
    if (!matchesFilter({ ...(d.connectionId ? { connectionId: d.connectionId } : {}), ...(d.model ? { model: d.model } : {}) }, serverFilter)) return;
    const row: Row = {
      id: d.requestId,
      requestId: d.requestId,
      createdAt: ev.at,
      finishedAt: ev.at,
      status: d.status,
      live: true,
      attempts: null,
      ...(d.model !== undefined ? { model: d.model } : {}),
      ...(d.provider !== undefined ? { provider: d.provider } : {}),
      ...(d.connectionId !== undefined ? { connectionId: d.connectionId } : {}),
      ...(d.attempts !== undefined ? { attemptCount: d.attempts } : {}),
      ...(d.latencyMs !== undefined ? { latencyMs: d.latencyMs } : {}),
      ...(d.errorCode !== undefined ? { errorCode: d.errorCode } : {}),
      ...(d.queueMs !== undefined ? { queueMs: d.queueMs } : {}),
      ...(d.upstreamMs !== undefined ? { upstreamMs: d.upstreamMs } : {}),
      ...(d.queueReason !== undefined ? { queueReason: d.queueReason } : {}),
      ...(d.stream !== undefined ? { stream: d.stream } : {}),
    };
    logs = [row, ...logs].slice(0, LIMIT);
    renderList();
    scheduleRefresh();
  });

  refreshBtn.addEventListener('click', () => void load());
  void load();
  return () => {
    unsubscribe();
    window.clearTimeout(refreshTimer);
  };
}
