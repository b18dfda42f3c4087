import { ApiError, endpoints, isAbortError } from '../api';
import { badge, busy, clear, confirmDialog, errorBox, formatDate, formatTime, h, loading, notice, parseTime } from '../dom';
import { formatAgo } from '../lib/format';
import { activeLeases, leaseCountdown, leaseCountText, toLeaseRows, type LeaseRow } from '../lib/leases';
import { healthStore } from '../lib/healthmodel';
import { live } from '../live';
import { href, type ViewContext } from '../router';
import { gateWrites } from './role-gate';

/** Leases are renewed by their clients; the page polls this often (and on `lease` events). */
const POLL_MS = 5000;
const EVENT_REFETCH_MS = 300;

const who = (r: LeaseRow) => r.connectionName || (r.connectionId && healthStore.connection(r.connectionId)?.name) || 'the connection';

function timeCell(v: string | number | null): HTMLElement {
  const d = parseTime(v);
  if (!d) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: d.toISOString(), title: formatDate(v) }, formatTime(d), h('small', { class: 'muted block' }, formatAgo(d)));
}

export function renderLeases(root: HTMLElement, ctx: ViewContext): () => void {
  let rows: LeaseRow[] | null = null;
  /** The gateway answered 404 ROUTE_NOT_FOUND: this build has no lease API. */
  let unsupported = false;
  let loadSeq = 0;
  let eventTimer = 0;

  const heading = h('h1', { tabindex: '-1' }, 'Leases');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const message = h('div', { class: 'row-message', 'aria-live': 'polite' });
  const countLine = h('p', { class: 'muted small count-line', 'aria-live': 'polite', 'data-testid': 'lease-count' });
  const listArea = h('div', { class: 'list-area' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h(
      'p',
      { class: 'muted page-intro' },
      'Exclusive session leases: a managed client owns one connection for a while, and the gateway routes no other request to it. A lease ends when its client releases it, when it is not renewed in time, or when you release it here. Refreshes every 5 s.',
    ),
    message,
    countLine,
    h('section', { 'aria-labelledby': 'leases-title' }, h('h2', { id: 'leases-title', class: 'visually-hidden' }, 'Active leases'), listArea),
  );

  // ------------------------------------------------------------ load

  async function load(quiet = false): Promise<void> {
    const seq = ++loadSeq;
    window.clearTimeout(eventTimer);
    if (!quiet || rows === null) {
      clear(listArea, loading('Loading leases…'));
      listArea.setAttribute('aria-busy', 'true');
    }
    refreshBtn.disabled = true;
    try {
      const data = await endpoints.listLeases(ctx.signal);
      if (ctx.signal.aborted || seq !== loadSeq) return;
      const now = Date.now();
      unsupported = false;
      // A lease whose countdown ended is shown as "expired" until this refresh drops it.
      rows = activeLeases(toLeaseRows(data.leases, now), now);
      renderList();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted || seq !== loadSeq) return;
      if (err instanceof ApiError && err.status === 404 && err.code === 'ROUTE_NOT_FOUND') {
        unsupported = true;
        rows = [];
        renderList();
        return;
      }
      if (quiet && rows !== null) return; // keep what is shown; the next poll retries
      rows = null;
      countLine.textContent = '';
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      if (seq === loadSeq) {
        listArea.removeAttribute('aria-busy');
        refreshBtn.disabled = false;
      }
    }
  }

  // ------------------------------------------------------------ render

  function renderList(): void {
    const list = rows ?? [];
    const focusKey = listArea.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset['focusKey'] : undefined;
    countLine.textContent = list.length ? leaseCountText(list.length) : '';
    if (list.length === 0) {
      clear(
        listArea,
        h(
          'div',
          { class: 'empty', 'data-testid': 'leases-empty' },
          h('p', { class: 'empty-title' }, 'No active lease'),
          h(
            'p',
            { class: 'muted' },
            'A lease lets one managed client (an agent session, for example) own a connection exclusively: while it holds the lease, its requests go only to that connection and nobody else’s do.',
          ),
          h(
            'p',
            { class: 'muted' },
            'To use leases, the client’s ',
            h('a', { href: href('/keys') }, 'API key'),
            ' needs the ',
            h('code', null, 'lease:exclusive'),
            ' scope and a list of ',
            h('code', null, 'allowedConnections'),
            ' it may lease (set them with ',
            h('code', null, 'PATCH /api/keys/{id}'),
            '). The client then acquires a lease with ',
            h('code', null, 'POST /api/v1/session-leases'),
            '; its leases appear here with a countdown, and you can release one at any time.',
          ),
          unsupported ? h('p', { class: 'alert alert-info', role: 'status', 'data-testid': 'leases-unsupported' }, 'This gateway build does not serve the lease API yet.') : null,
        ),
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
          { class: 'table', 'data-testid': 'leases-table' },
          h('caption', { class: 'visually-hidden' }, `${leaseCountText(list.length)}, soonest to expire first`),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Owner', 'API key', 'Connection', 'Model', 'Generation', 'State', 'Acquired', 'Renewed', 'Expires in'].map((t) =>
                h('th', { scope: 'col', class: t === 'Generation' ? 'num' : null }, t),
              ),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
            ),
          ),
          h('tbody', null, list.map(renderRow)),
        ),
      ),
    );
    if (focusKey) {
      const el = listArea.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`);
      if (el && !(el as HTMLButtonElement).disabled) el.focus();
      else heading.focus();
    }
  }

  function renderRow(r: LeaseRow): HTMLTableRowElement {
    const now = Date.now();
    const cd = leaseCountdown(r, now);
    const btn = h(
      'button',
      { type: 'button', class: 'btn btn-small btn-warn', 'data-focus-key': `${r.id}:release`, 'aria-label': `Release the lease on ${who(r)}`, disabled: cd.expired },
      'Release',
    );
    btn.addEventListener('click', () => void release(r, btn));
    gateWrites([[btn, 'DELETE /api/resilience/leases/{id}']]);
    return h(
      'tr',
      { 'data-lease': r.id, 'data-testid': 'lease-row', class: cd.expired ? 'row-expired' : null },
      h('td', null, h('code', { title: 'The first characters of the owner’s hash; the owner itself is never shown.' }, r.ownerHashPrefix ? `${r.ownerHashPrefix}…` : '—')),
      h('td', null, r.keyName || h('span', { class: 'muted' }, r.keyId || '—')),
      h(
        'td',
        null,
        h('div', { class: 'cell-main' }, who(r)),
        r.provider ? h('small', { class: 'muted block' }, h('code', null, r.provider)) : null,
      ),
      h('td', null, r.model ? h('code', null, r.model) : h('span', { class: 'muted' }, 'any')),
      h('td', { class: 'num' }, r.generation ?? '—'),
      h('td', null, badge(r.state.replace(/_/g, ' '), r.state === 'active' ? 'ok' : 'muted')),
      h('td', null, timeCell(r.acquiredAt)),
      h('td', null, timeCell(r.renewedAt)),
      h(
        'td',
        null,
        h(
          'span',
          { class: `countdown${cd.expired ? ' countdown-expired' : ''}`, 'data-lease-until': String(r.until), 'data-testid': 'lease-countdown', title: `until ${formatTime(new Date(r.until))}` },
          cd.text,
        ),
      ),
      h('td', { class: 'actions' }, btn),
    );
  }

  // ------------------------------------------------------------ release

  async function release(r: LeaseRow, btn: HTMLButtonElement): Promise<void> {
    const yes = await confirmDialog({
      title: `Release the lease on ${who(r)}?`,
      message: `The client (owner ${r.ownerHashPrefix || 'unknown'}…, key ${r.keyName || r.keyId || 'unknown'}) loses the connection at once: its next request on this lease fails and it has to acquire a new one. Other requests may be routed to ${who(r)} again.`,
      confirmLabel: 'Release lease',
      danger: true,
    });
    if (!yes) {
      btn.focus();
      return;
    }
    const list = rows ?? [];
    const i = list.findIndex((x) => x.id === r.id);
    const neighbour = list[i + 1] ?? list[i - 1];
    await busy([btn], async () => {
      try {
        await endpoints.releaseLease(r.id);
        if (ctx.signal.aborted) return;
        clear(message, notice(`Released the lease on ${who(r)}.`, 'success'));
      } catch (err) {
        if (ctx.signal.aborted) return;
        if (err instanceof ApiError && err.status === 404) clear(message, notice(`The lease on ${who(r)} had already ended.`, 'info'));
        else {
          clear(message, errorBox(err));
          return;
        }
      }
      rows = (rows ?? []).filter((x) => x.id !== r.id);
      renderList();
      const next = neighbour ? listArea.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(`${neighbour.id}:release`)}"]`) : null;
      if (next && !(next as HTMLButtonElement).disabled) next.focus();
      else heading.focus();
      void load(true);
    }, { button: btn, label: 'Releasing…' });
  }

  // ------------------------------------------------------------ live

  const ticker = window.setInterval(() => {
    const now = Date.now();
    for (const el of listArea.querySelectorAll<HTMLElement>('[data-lease-until]')) {
      const cd = leaseCountdown({ until: Number(el.dataset['leaseUntil']), state: 'active' }, now);
      if (el.textContent !== cd.text) el.textContent = cd.text;
      if (cd.expired) {
        el.classList.add('countdown-expired');
        const tr = el.closest('tr');
        tr?.classList.add('row-expired');
        const btn = tr?.querySelector<HTMLButtonElement>('button');
        if (btn && !btn.disabled) btn.disabled = true;
      }
    }
  }, 1000);

  const poll = window.setInterval(() => {
    // An older gateway without the lease API is asked again on Refresh or a `lease` event only.
    if (!document.hidden && !unsupported) void load(true);
  }, POLL_MS);

  refreshBtn.addEventListener('click', () => {
    message.replaceChildren();
    void load();
  });

  const cleanups = [
    live.subscribe('lease', () => {
      window.clearTimeout(eventTimer);
      eventTimer = window.setTimeout(() => void load(true), EVENT_REFETCH_MS);
    }),
  ];

  void load();
  return () => {
    window.clearInterval(ticker);
    window.clearInterval(poll);
    window.clearTimeout(eventTimer);
    cleanups.forEach((fn) => fn());
  };
}
