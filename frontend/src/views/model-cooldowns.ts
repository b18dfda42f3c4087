import { endpoints, isAbortError } from '../api';
import { busy, clear, confirmDialog, emptyState, errorBox, formatTime, h, loading, notice } from '../dom';
import { applyLockoutEvent, expireLockouts, lockoutCountText, lockoutReason, toLockoutRows, type LockoutRow } from '../lib/lockouts';
import { readLockout } from '../lib/lockout-settings';
import { live } from '../live';
import { href, type ViewContext } from '../router';
import { gateWrites } from './role-gate';
import { countdown, focusKeyOf, restoreFocus, scopeBadge, startCountdowns } from './lockout-parts';
import { healthStore } from '../lib/healthmodel';

/** Live events name what changed; a fetch shortly after fills in the rest (reason, names). */
const REFETCH_DELAY_MS = 400;

/** The connection by name (the health model's when the row has none), never its 32-hex id. */
const who = (r: LockoutRow) => r.connectionName || healthStore.connection(r.connectionId)?.name || 'a deleted connection';

export function renderModelCooldowns(root: HTMLElement, ctx: ViewContext): () => void {
  let rows: LockoutRow[] | null = null;
  let lockoutEnabled: boolean | null = null;
  const names = new Map<string, string>();
  let namesLoaded = false;
  let refetchTimer = 0;
  let loadSeq = 0;

  const heading = h('h1', { tabindex: '-1' }, 'Model Cooldowns');
  // Starts as the role and the (still unknown) list allow: never enabled for
  // a viewer, nor with nothing to reactivate, while the first load is on its way.
  const reactivateAllBtn = h('button', { type: 'button', class: 'btn btn-small btn-warn', disabled: true }, 'Reactivate all');
  gateWrites([[reactivateAllBtn, 'DELETE /api/resilience/model-cooldowns']]);
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const disabledNote = h('div', { class: 'note-area' });
  const message = h('div', { class: 'row-message', 'aria-live': 'polite' });
  const countLine = h('p', { class: 'muted small', 'aria-live': 'polite', 'data-testid': 'lockout-count' });
  const listArea = h('div', { class: 'list-area' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, h('div', { class: 'btn-row' }, reactivateAllBtn, refreshBtn)),
    h(
      'p',
      { class: 'muted page-intro' },
      'Models locked out on one connection after repeated errors (for example a 404 for a model the account cannot use). The connection keeps serving its other models; a lock ends by itself when its countdown reaches zero, or reactivate it now.',
    ),
    disabledNote,
    message,
    countLine,
    h('section', { 'aria-labelledby': 'model-cooldowns-title' }, h('h2', { id: 'model-cooldowns-title', class: 'visually-hidden' }, 'Locked models'), listArea),
  );

  // ------------------------------------------------------------ load

  async function load(quiet = false): Promise<void> {
    const seq = ++loadSeq;
    window.clearTimeout(refetchTimer);
    if (!quiet || rows === null) {
      clear(listArea, loading('Loading model lockouts…'));
      listArea.setAttribute('aria-busy', 'true');
    }
    refreshBtn.disabled = true;
    try {
      const [items, conns] = await Promise.all([
        endpoints.listModelCooldowns(ctx.signal),
        // Names for rows that arrive live before the next fetch.
        namesLoaded ? Promise.resolve(null) : endpoints.listConnections(ctx.signal).catch(() => null),
      ]);
      if (ctx.signal.aborted || seq !== loadSeq) return;
      if (conns) namesLoaded = true;
      for (const c of conns ?? []) names.set(c.id, c.name || c.provider);
      for (const it of items) if (it.connectionName) names.set(it.connectionId, it.connectionName);
      rows = toLockoutRows(items, Date.now());
      renderList();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted || seq !== loadSeq) return;
      rows = null;
      countLine.textContent = '';
      reactivateAllBtn.disabled = true;
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      if (seq === loadSeq) {
        listArea.removeAttribute('aria-busy');
        refreshBtn.disabled = false;
      }
    }
  }

  async function loadSettings(): Promise<void> {
    try {
      const doc = await endpoints.getResilience(ctx.signal);
      if (ctx.signal.aborted) return;
      lockoutEnabled = readLockout(doc).enabled;
    } catch {
      if (ctx.signal.aborted) return;
      lockoutEnabled = null; // the note is a hint; the list shows any real error
    }
    renderNote();
    if (rows && rows.length === 0) renderList(); // its empty-state hint depends on the setting
  }

  function renderNote(): void {
    if (lockoutEnabled !== false) {
      disabledNote.replaceChildren();
      return;
    }
    clear(
      disabledNote,
      h(
        'div',
        { class: 'alert alert-info', role: 'status', 'data-testid': 'lockout-disabled' },
        h('p', null, 'Model lockout is turned off: errors never lock a model out, so this list stays empty. '),
        h('a', { href: href('/lockout-settings') }, 'Turn it on in Lockout Settings'),
      ),
    );
  }

  function scheduleRefetch(): void {
    window.clearTimeout(refetchTimer);
    refetchTimer = window.setTimeout(() => void load(true), REFETCH_DELAY_MS);
  }

  // ------------------------------------------------------------ render

  function renderList(focusKeys: Array<string | undefined> = [focusKeyOf(document.activeElement)]): void {
    const list = rows ?? [];
    countLine.textContent = list.length ? lockoutCountText(list) : ''; // the empty state says it otherwise
    reactivateAllBtn.disabled = list.length === 0;
    gateWrites([[reactivateAllBtn, 'DELETE /api/resilience/model-cooldowns']]);
    const hadFocus = listArea.contains(document.activeElement);
    if (list.length === 0) {
      clear(
        listArea,
        emptyState(
          'No model is locked',
          lockoutEnabled === false ? 'Lockout is off, so nothing will be locked.' : 'When a model keeps failing on a connection, it is listed here with a countdown.',
        ),
      );
      if (hadFocus) heading.focus();
      return;
    }
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table', 'data-testid': 'model-cooldowns-table' },
          h('caption', { class: 'visually-hidden' }, `${lockoutCountText(list)}, by connection`),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Provider', 'Connection', 'Model', 'Scope', 'Reason', 'Failures', 'Remaining'].map((t) => h('th', { scope: 'col', class: t === 'Failures' ? 'num' : null }, t)),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
            ),
          ),
          h('tbody', null, list.map(renderRow)),
        ),
      ),
    );
    if (hadFocus || focusKeys.some(Boolean)) restoreFocus(listArea, focusKeys, hadFocus ? heading : undefined);
  }

  function renderRow(r: LockoutRow): HTMLTableRowElement {
    const label = `${r.model} on ${who(r)}`;
    const btn = h(
      'button',
      { type: 'button', class: 'btn btn-small', 'data-focus-key': `${r.key}:reactivate`, 'aria-label': `Reactivate ${label}` },
      'Reactivate',
    );
    btn.addEventListener('click', () => void reactivate(r, btn));
    gateWrites([[btn, 'DELETE /api/resilience/model-cooldowns']]);
    return h(
      'tr',
      { 'data-key': r.key, 'data-model': r.model, 'data-connection': r.connectionId, 'data-testid': 'lockout-row' },
      h('td', null, h('span', { title: r.provider }, healthStore.connection(r.connectionId)?.providerName || r.provider)),
      h('td', null, h('div', { class: 'cell-main' }, who(r))),
      h('th', { scope: 'row' }, h('code', null, r.model)),
      h('td', null, scopeBadge(r.scope)),
      h('td', null, lockoutReason(r) ? h('span', { class: 'error-type' }, lockoutReason(r)) : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'num' }, r.failureCount ?? '—'),
      // The guide's card shows when each lock expires: the countdown, and the time itself.
      h('td', null, countdown(r.until, 'lockout-countdown'), h('div', { class: 'muted small', 'data-testid': 'lockout-expires' }, `until ${formatTime(new Date(r.until))}`)),
      h('td', { class: 'actions' }, btn),
    );
  }

  // ------------------------------------------------------------ actions

  async function reactivate(r: LockoutRow, btn: HTMLButtonElement): Promise<void> {
    // After the row goes, focus moves to the next row's button (or the previous one).
    const list = rows ?? [];
    const i = list.findIndex((x) => x.key === r.key);
    const neighbours = [list[i + 1], list[i - 1]].map((x) => (x ? `${x.key}:reactivate` : undefined));
    await busy([btn], async () => {
      try {
        const res = await endpoints.reactivateModel(r);
        if (ctx.signal.aborted) return;
        // The gateway clears every scope of this model on this connection.
        const before = (rows ?? []).length;
        rows = (rows ?? []).filter((x) => !(x.provider === r.provider && x.connectionId === r.connectionId && x.model === r.model));
        const removed = typeof res?.removed === 'number' ? res.removed : 1;
        if (removed > before - rows.length) scheduleRefetch(); // e.g. a quota family named by another model
        clear(
          message,
          notice(removed > 0 ? `Reactivated ${r.model} on ${who(r)}.` : `${r.model} on ${who(r)} was no longer locked.`, removed > 0 ? 'success' : 'info'),
        );
        // The button may have lost focus while disabled; either way it goes with its row.
        const active = document.activeElement;
        const onButton = active === btn || active === null || active === document.body;
        renderList(onButton ? neighbours : [focusKeyOf(active)]);
        if (onButton && !listArea.contains(document.activeElement)) heading.focus();
      } catch (err) {
        if (!ctx.signal.aborted) clear(message, errorBox(err));
      }
    }, { button: btn, label: 'Reactivating…' });
  }

  reactivateAllBtn.addEventListener('click', async () => {
    const n = rows?.length ?? 0;
    if (!n) return;
    const yes = await confirmDialog({
      title: 'Reactivate every locked model?',
      message: `${lockoutCountText(rows ?? [])}. All of them are routed to again at once; a model that still fails is locked again.`,
      confirmLabel: 'Reactivate all',
    });
    if (!yes) {
      reactivateAllBtn.focus();
      return;
    }
    await busy([reactivateAllBtn], async () => {
      try {
        const res = await endpoints.reactivateAllModels();
        if (ctx.signal.aborted) return;
        const removed = typeof res?.removed === 'number' ? res.removed : n;
        rows = [];
        clear(message, notice(removed ? `Reactivated ${removed} model${removed === 1 ? '' : 's'}.` : 'No model was locked any more.', 'success'));
        renderList();
        heading.focus();
        scheduleRefetch();
      } catch (err) {
        if (!ctx.signal.aborted) clear(message, errorBox(err));
      }
    }, { button: reactivateAllBtn, label: 'Reactivating…' });
  });

  refreshBtn.addEventListener('click', () => {
    message.replaceChildren();
    void load();
    void loadSettings();
  });

  // ------------------------------------------------------------ live

  const stopCountdowns = startCountdowns(listArea, (now) => {
    if (!rows) return;
    const { live: still, expired } = expireLockouts(rows, now);
    if (!expired.length) return;
    rows = still;
    renderList();
  });

  const cleanups = [
    stopCountdowns,
    live.subscribe('lockout', (ev) => {
      if (rows === null) {
        scheduleRefetch(); // the first load may have been answered before this change
        return;
      }
      const res = applyLockoutEvent(rows, ev.data, Date.now(), names);
      if (res.changed) {
        rows = res.rows;
        renderList();
      }
      if (res.refetch) scheduleRefetch();
    }),
    live.subscribe('connection', (ev) => {
      if (ev.data.name && names.get(ev.data.id) !== ev.data.name) {
        names.set(ev.data.id, ev.data.name);
        if (rows?.some((r) => r.connectionId === ev.data.id)) scheduleRefetch();
      }
    }),
    live.subscribe('settings', (ev) => {
      if (ev.data.section === 'resilience') void loadSettings();
    }),
    // Events missed while the stream was down: fetch again when it is back.
    (() => {
      let wasOpen = live.getStatus().state === 'open';
      return live.onStatus((s) => {
        const open = s.state === 'open';
        if (open && !wasOpen && rows !== null) void load(true);
        wasOpen = open;
      });
    })(),
  ];

  void load();
  void loadSettings();
  return () => {
    window.clearTimeout(refetchTimer);
    cleanups.forEach((fn) => fn());
  };
}
