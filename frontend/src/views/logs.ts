import { endpoints, isAbortError, type AttemptLog, type RequestLog } from '../api';
import { badge, clear, emptyState, errorBox, formatDate, formatTime, h, loading, parseTime } from '../dom';
import { formatDuration } from '../lib/format';
import { live } from '../live';
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

const lastAttempt = (l: RequestLog): AttemptLog | undefined => (Array.isArray(l.attempts) ? l.attempts[l.attempts.length - 1] : undefined);

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
      history.replaceState(history.state, '', value === 'all' ? '#/logs' : `#/logs?status=${value}`);
      renderList();
    });
    return h('label', { class: 'seg', for: input.id }, input, { all: 'All', ok: 'OK', error: 'Errors' }[value]);
  });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h('p', { class: 'muted page-intro' }, `The last ${LIMIT} requests through the gateway; new ones appear at the top as they finish. Expand a row to see each attempt and its verdict.`),
    h('div', { class: 'toolbar' }, h('fieldset', { class: 'segmented' }, h('legend', { class: 'visually-hidden' }, 'Show requests'), radios), countLine),
    h('section', { 'aria-labelledby': 'logs-title' }, h('h2', { id: 'logs-title', class: 'visually-hidden' }, 'Request log'), listArea),
  );

  async function load(quiet = false): Promise<void> {
    if (!quiet || logs === null) clear(listArea, loading('Loading request logs…'));
    refreshBtn.disabled = true;
    try {
      const [list, conns] = await Promise.all([
        endpoints.listLogs(LIMIT, ctx.signal),
        names.size ? Promise.resolve(null) : endpoints.listConnections(ctx.signal).catch(() => null),
      ]);
      if (ctx.signal.aborted) return;
      for (const c of conns ?? []) names.set(c.id, c.name || c.provider);
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
              ['Time', 'Model', 'Connection', 'Status', 'Latency', 'Attempts', 'Error'].map((t) => h('th', { scope: 'col' }, t)),
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
        // A failed request names no connection; its last attempt does.
        h('td', null, connectionName(l.connectionId || lastAttempt(l)?.connectionId, l.provider || lastAttempt(l)?.provider)),
        h('td', null, badge(String(l.status), ok ? 'ok' : 'bad')),
        h('td', { class: 'num' }, l.latencyMs != null ? h('span', { title: `${l.latencyMs} ms` }, formatDuration(l.latencyMs)) : '—'),
        h('td', { class: 'num' }, count),
        h('td', null, l.errorCode ? h('span', { class: 'error-type' }, l.errorCode) : h('span', { class: 'muted' }, '—')),
      ),
      isOpen ? h('tr', { class: 'detail-row', id: detailId }, h('td', { colspan: '8' }, renderAttempts(l))) : null,
    );
  }

  function renderAttempts(l: Row): HTMLElement {
    const attempts: AttemptLog[] = Array.isArray(l.attempts) ? l.attempts : [];
    if (attempts.length === 0) {
      return h('p', { class: 'muted small' }, l.live ? 'Attempt details arrive in a moment…' : 'No upstream attempt was made (the request was refused before routing).');
    }
    return h(
      'table',
      { class: 'table table-inner' },
      h('caption', { class: 'visually-hidden' }, 'Attempts in order'),
      h('thead', null, h('tr', null, ['#', 'Connection', 'Model', 'Status', 'Verdict', 'Code', 'Latency'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        null,
        attempts.map((a, i) =>
          h(
            'tr',
            null,
            h('td', { class: 'num' }, i + 1),
            h('td', null, connectionName(a.connectionId, a.provider)),
            h('td', null, h('code', null, a.model || '—')),
            h('td', null, a.status ? badge(String(a.status), isOkStatus(a.status) ? 'ok' : 'bad') : '—'),
            h('td', null, a.verdict ? h('span', { class: 'verdict', 'data-testid': 'verdict' }, a.verdict) : '—'),
            h('td', null, a.code ? h('span', { class: 'error-type' }, a.code) : '—'),
            h('td', { class: 'num' }, a.latencyMs != null ? h('span', { title: `${a.latencyMs} ms` }, formatDuration(a.latencyMs)) : '—'),
          ),
        ),
      ),
    );
  }

  const unsubscribe = live.subscribe('request', (ev) => {
    if (!logs) return;
    const d = ev.data;
    if (logs.some((l) => l.requestId === d.requestId)) return;
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
