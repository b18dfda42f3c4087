import { endpoints, isAbortError, type ApiKey, type AttemptLog, type LogFilter, type RequestLog } from '../api';
import { badge, clear, emptyState, errorBox, formatDate, formatTime, h, loading, parseTime } from '../dom';
import { formatDuration } from '../lib/format';
import { live } from '../live';
import { queueNote } from '../lib/concurrency';
import type { ViewContext } from '../router';

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
  const connSelect = h('select', { id: 'log-conn' }, h('option', { value: '' }, 'All connections'));
  const keySelect = h('select', { id: 'log-key' }, h('option', { value: '' }, 'All keys'));
  const modelInput = h('input', { id: 'log-model', list: 'log-models', placeholder: 'All models', autocomplete: 'off', spellcheck: 'false' });
  const modelList = h('datalist', { id: 'log-models' });
  modelInput.value = serverFilter.model ?? '';
  function syncUrl(): void {
    const q = new URLSearchParams();
    if (filter !== 'all') q.set('status', filter);
    for (const [k, v] of Object.entries(serverFilter)) if (v) q.set(k, v);
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
      syncUrl();
      renderList();
    });
    return h('label', { class: 'seg', for: input.id }, input, { all: 'All', ok: 'OK', error: 'Errors' }[value]);
  });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h('p', { class: 'muted page-intro' }, `The last ${LIMIT} requests through the gateway; new ones appear at the top as they finish. Expand a row to see each attempt and its verdict.`),
    h(
      'div',
      { class: 'usage-toolbar log-filters' },
      h('fieldset', { class: 'segmented' }, h('legend', { class: 'visually-hidden' }, 'Show requests'), radios),
      h('label', { class: 'inline-field', for: connSelect.id }, 'Connection ', connSelect),
      h('label', { class: 'inline-field', for: modelInput.id }, 'Model ', modelInput, modelList),
      h('label', { class: 'inline-field', for: keySelect.id }, 'Key ', keySelect),
      countLine,
    ),
    h('section', { 'aria-labelledby': 'logs-title' }, h('h2', { id: 'logs-title', class: 'visually-hidden' }, 'Request log'), listArea),
  );

  async function load(quiet = false): Promise<void> {
    if (!quiet || logs === null) clear(listArea, loading('Loading request logs…'));
    refreshBtn.disabled = true;
    try {
      const [list, conns, keyList] = await Promise.all([
        endpoints.listLogs(LIMIT, ctx.signal, serverFilter),
        names.size ? Promise.resolve(null) : endpoints.listConnections(ctx.signal).catch(() => null),
        keys.length ? Promise.resolve(null) : endpoints.listKeys(ctx.signal).catch(() => null),
      ]);
      if (ctx.signal.aborted) return;
      for (const c of conns ?? []) names.set(c.id, c.name || c.provider);
      if (conns) {
        connSelect.replaceChildren(
          h('option', { value: '' }, 'All connections'),
          ...conns.map((c) => h('option', { value: c.id, selected: c.id === serverFilter.connectionId }, c.name || c.id)),
        );
      }
      if (keyList) {
        keys = keyList;
        keySelect.replaceChildren(h('option', { value: '' }, 'All keys'), ...keys.map((k) => h('option', { value: k.id, selected: k.id === serverFilter.keyId }, k.name || k.id)));
      }
      const models = new Set([...(modelList.options ? [...modelList.options].map((o) => o.value) : []), ...list.map((l) => l.model ?? '').filter(Boolean)]);
      modelList.replaceChildren(...[...models].sort().map((m) => h('option', { value: m })));
      // Live rows the server has not written yet stay until it has.
      const fetched = new Set(list.map((l) => l.requestId));
      const pending = (logs ?? []).filter((l) => l.live && !fetched.has(l.requestId));
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
    countLine.textContent = logs ? `Showing ${shown.length} of ${all.length}` : '';
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
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Details')),
              ['Time', 'Model', 'Connection', 'Status', 'Latency', 'Queue', 'Upstream', 'Attempts', 'Error'].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          shown.map(renderRow),
        ),
      ),
    );
    if (focusKey) listArea.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
  }

  function connectionName(id: string | undefined, provider: string | undefined): string {
    if (id) return names.get(id) ?? id.slice(0, 8);
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
        'aria-label': `${isOpen ? 'Hide' : 'Show'} attempts of the ${l.model || ''} request at ${formatDate(l.createdAt)}`,
        'data-focus-key': `${key}:toggle`,
      },
      h('span', { 'aria-hidden': 'true' }, isOpen ? '▾' : '▸'),
    );
    toggle.addEventListener('click', () => {
      if (expanded.has(key)) expanded.delete(key);
      else expanded.add(key);
      renderList();
    });
    const ok = isOkStatus(l.status);
    // Each request is its own <tbody> so the detail row stays with its row.
    return h(
      'tbody',
      { class: l.live ? 'log-live' : null, 'data-request-id': key },
      h(
        'tr',
        null,
        h('td', null, toggle),
        h('td', { class: 'nowrap' }, logTime(l.createdAt)),
        h('td', null, h('code', null, l.model || '—'), l.stream ? h('span', { class: 'chip chip-inline' }, 'stream') : null),
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
        h('td', { class: 'num' }, l.latencyMs != null ? h('span', { title: `${l.latencyMs} ms` }, formatDuration(l.latencyMs)) : '—'),
        h(
          'td',
          { class: 'num', 'data-testid': 'queue-time', title: queueNote(l.queueMs, l.queueReason) || 'went straight to the upstream' },
          l.queueMs ? formatDuration(l.queueMs) : '—',
          queueNote(l.queueMs, l.queueReason) ? h('small', { class: 'muted block' }, queueNote(l.queueMs, l.queueReason)) : null,
        ),
        h('td', { class: 'num' }, l.upstreamMs != null ? formatDuration(l.upstreamMs) : '—'),
        h('td', { class: 'num' }, count),
        h('td', null, l.errorCode ? h('span', { class: 'error-type' }, l.errorCode) : h('span', { class: 'muted' }, '—')),
      ),
      isOpen ? h('tr', { class: 'detail-row', id: detailId }, h('td', { colspan: '10' }, renderAttempts(l))) : null,
    );
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
                h('span', { 'data-testid': 'exclusion-reason', title: x.code ?? '' }, EXCLUSION_TEXT[x.code ?? ''] ?? x.code ?? 'excluded'),
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
      h('thead', null, h('tr', null, ['#', 'Target', 'Model', 'Status', 'Verdict', 'Code', 'Wait', 'Duration'].map((t) => h('th', { scope: 'col' }, t)))),
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
            h('td', null, a.code ? h('span', { class: 'error-type' }, a.code) : '—'),
            h('td', { class: 'num' }, wait ? h('span', { title: `${wait} ms` }, formatDuration(wait)) : '—'),
            h('td', { class: 'num' }, a.latencyMs != null ? h('span', { title: `${a.latencyMs} ms` }, formatDuration(a.latencyMs)) : '—'),
          );
        }),
      ),
    );
  }

  const unsubscribe = live.subscribe('request', (ev) => {
    if (!logs) return;
    const d = ev.data;
    if (logs.some((l) => l.requestId === d.requestId)) return;
    // A live event does not name its key: with a key filter, the next refresh decides.
    if (serverFilter.keyId) return;
    if (!matchesFilter({ ...(d.connectionId ? { connectionId: d.connectionId } : {}), ...(d.model ? { model: d.model } : {}) }, serverFilter)) return;
    const row: Row = {
      id: d.requestId,
      requestId: d.requestId,
      createdAt: ev.at,
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
