import { ApiError, endpoints, isAbortError, type Health, type UpdateStatus } from '../api';
import { badge, clear, copyText, emptyState, errorBox, formatDate, formatTime, h, loading } from '../dom';
import { exactMs, formatCountdown, formatDuration, maskSecret } from '../lib/format';
import { breakerBadge, healthBadge } from '../lib/health';
import { backIn, healthStore, instant, problems, stateBadge, stateInfo, type HealthReport, type Problem } from '../lib/healthmodel';
import { instanceLine, instancesSummary, type InstanceList } from '../lib/instances';
import { activeLeaseCount } from '../lib/leases';
import { describeEvent, type LiveEvent } from '../lib/sse';
import { live, type LiveStatus } from '../live';
import { href, type ViewContext } from '../router';
import { gateWrites, whyNot } from './role-gate';
import { type FixTarget } from '../lib/fixes';
import { deniedNote, fixButtons } from './fix-buttons';
import { NEEDS_A_FIX, overviewNumbers, providerRow } from '../lib/overview-numbers';

const FEED_SIZE = 50;

/** The client endpoint: this page's origin in a browser; the default address in the desktop window. */
export function endpointUrl(loc: Pick<Location, 'protocol' | 'host' | 'origin'> = location): string {
  const web = (loc.protocol === 'http:' || loc.protocol === 'https:') && !/^wails\.localhost(:\d+)?$/.test(loc.host);
  return `${web ? loc.origin : 'http://127.0.0.1:20128'}/v1`;
}

export function renderOverview(root: HTMLElement, ctx: ViewContext): () => void {
  const names = new Map<string, string>();
  let health: Health | null = null;
  let soonestDeadline: number | null = null;
  let startedAt: number | null = null;
  /** Uptime rounded down to whole seconds (it ticks every second). */
  const upMs = () => (startedAt == null ? 0 : Math.max(0, Math.floor((Date.now() - startedAt) / 1000) * 1000));
  const cleanups: Array<() => void> = [];
  const pauseError = h('div', { class: 'pause-error' });
  /** The opt-in release check: "version X is available" or a button to check. */
  const updateArea = h('div', { class: 'update-area', 'data-testid': 'update-area' });

  const heading = h('h1', { tabindex: '-1' }, 'Overview');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const statusArea = h('section', { class: 'card status-card', 'aria-labelledby': 'ov-status-title' });
  const countsArea = h('div', { class: 'stat-grid' });
  const brokenArea = h('section', { class: 'card', 'aria-labelledby': 'ov-broken-title', 'data-testid': 'not-serving' });
  const fixMessage = h('div', { role: 'status' });
  const providersArea = h('div', { class: 'list-area' });
  const clientArea = h('section', { class: 'card', 'aria-labelledby': 'ov-client-title' });
  /** Team server only (several instances on one PostgreSQL): hidden on a desktop. */
  const teamArea = h('section', { class: 'card', 'aria-labelledby': 'ov-team-title', 'data-testid': 'team-server', hidden: true });
  const feedState = h('p', { class: 'feed-state muted' });
  const feedList = h('ol', { class: 'feed', role: 'log', 'aria-relevant': 'additions', 'aria-label': 'Live events, newest first' });
  const feedEmpty = emptyState('Waiting for events…', 'Cooldowns, breaker changes and requests appear here as they happen.');

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h('p', { class: 'muted page-intro' }, 'Gateway health, how to connect a client, and what is happening right now.'),
    statusArea,
    brokenArea,
    h('section', { 'aria-label': 'Counts' }, countsArea),
    teamArea,
    clientArea,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'ov-providers-title' },
      h('h2', { id: 'ov-providers-title' }, 'Provider health'),
      providersArea,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'ov-feed-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'ov-feed-title' }, 'Live events'), feedState),
      feedEmpty,
      feedList,
    ),
  );
  clear(statusArea, h('h2', { id: 'ov-status-title', class: 'visually-hidden' }, 'Gateway status'), loading('Loading gateway health…'));
  clear(countsArea, loading('Loading counts…'));
  clear(brokenArea, h('h2', { id: 'ov-broken-title' }, 'What is not serving'), loading('Loading…'));
  clear(providersArea, loading('Loading provider health…'));

  // ------------------------------------------------------------ health and counts

  function renderHealth(): void {
    if (!health) return;
    // Paused is a state of its own: never "Degraded — Requests are served".
    const b = healthBadge(health.paused === true ? 'paused' : health.status);
    if (typeof health.uptime === 'number') startedAt = Date.now() - health.uptime * 1000;
    const line = overviewNumbers(healthStore.get()).line;
    const paused = health.paused === true;
    const pauseBtn = h('button', { type: 'button', class: `btn btn-small${paused ? ' btn-primary' : ''}` }, paused ? 'Resume gateway' : 'Pause gateway');
    pauseBtn.addEventListener('click', () => void togglePause(pauseBtn, !paused));
    gateWrites([[pauseBtn, 'PATCH /api/gateway']]);
    clear(
      statusArea,
      h('h2', { id: 'ov-status-title', class: 'visually-hidden' }, 'Gateway status'),
      h(
        'div',
        { class: 'status-line' },
        h('span', { class: `health health-${b.tone} health-large`, 'data-testid': 'overview-health' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), b.label),
        h(
          'div',
          { class: 'status-text' },
          line ? h('p', { class: 'status-line-text', 'data-testid': 'status-line' }, line) : null,
          h('p', { class: 'status-desc' }, b.description),
          h(
            'p',
            { class: 'muted small' },
            health.version ? `version ${health.version}` : '',
            startedAt != null ? h('span', null, `${health.version ? ' · ' : ''}up `, h('span', { 'data-testid': 'uptime' }, formatDuration(upMs()))) : null,
          ),
        ),
        typeof health.paused === 'boolean' ? pauseBtn : null,
      ),
      updateArea,
      paused
        ? h('p', { class: 'alert alert-warn', role: 'status', 'data-testid': 'paused' }, 'The gateway is paused: clients get 503 GATEWAY_PAUSED until you resume it.')
        : null,
      pauseError,

    );
    const cb = health.circuitBreakers ?? {};
    const ch = health.connectionHealth ?? {};
    void ch;
    soonestDeadline = instant(healthStore.get()?.summary?.nextBack);
    clear(
      countsArea,
      statCard('Circuit breakers', 'ov-cb', [
        ['Open', cb.open ?? 0, cb.open ? 'bad' : ''],
        ['Half-open', cb.halfOpen ?? 0, cb.halfOpen ? 'warn' : ''],
        ['Degraded', cb.degraded ?? 0, cb.degraded ? 'warn' : ''],
        ['Closed', cb.closed ?? 0, ''],
        ['Total', cb.total ?? 0, ''],
      ]),
      statCard('Connections', 'ov-conn', connectionRows()),
      leasesCard(),
    );
  }

  /** Connection counts from the health model: serving, cooling, breaker open, out of service, next back. */
  function connectionRows(): Array<[string, number | string, string, string?]> {
    // The same pass as the status line, the feed and the provider rows (lib/overview-numbers.ts).
    const n = overviewNumbers(healthStore.get()).counts;
    const rows: Array<[string, number | string, string, string?]> = [
      ['Serving', n.total ? `${n.serving} of ${n.total}` : '—', n.serving < n.total ? 'warn' : '', 'serving-count'],
      ['Cooling down', n.cooling, n.cooling ? 'warn' : ''],
      ['Breaker open', n.breakerOpen, n.breakerOpen ? 'bad' : ''],
      ['Out of service', n.outOfService, n.outOfService ? 'bad' : '', 'out-of-service-count'],
      ['Next back', soonestDeadline ? formatCountdown(soonestDeadline - Date.now()) : '—', '', 'soonest-retry'],
    ];
    return rows;
  }

  // ------------------------------------------------------------ what is not serving

  function renderBroken(): void {
    const r = healthStore.get();
    const head = h('div', { class: 'section-head' }, h('h2', { id: 'ov-broken-title' }, 'What is not serving'));
    if (!r) {
      clear(brokenArea, head, loading('Loading…'));
      return;
    }
    const list = problems(r);
    if (!r.summary?.total) {
      clear(
        brokenArea,
        head,
        h(
          'p',
          { class: 'setup-state', 'data-testid': 'setup-state' },
          h('span', { class: 'health health-muted' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), 'Set up'),
          ' No connection yet. ',
          h('a', { href: href('/connections') }, 'Add a provider connection'),
          ' so the gateway has somewhere to route requests.',
        ),
      );
      return;
    }
    if (list.length === 0) {
      clear(brokenArea, head, h('p', { class: 'muted', 'data-testid': 'all-serving' }, 'Everything is serving: no cooldown, open breaker, locked model or dead combo.'), fixMessage);
      return;
    }
    clear(brokenArea, head, h('ul', { class: 'problem-list' }, list.map(problemItem)), fixMessage);
  }

  function problemItem(p: Problem): HTMLElement {
    const b = stateBadge(p.state);
    const until = instant(p.until);
    const since = instant(p.since);
    const fixes = fixButtons(fixTarget(p), p.fixes, fixOpts);
    const comboBack = p.kind === 'combo' ? overviewNumbers(healthStore.get()).deadCombos.find((c) => c.id === p.id) : undefined;
    const what = p.kind === 'combo' ? 'Combo' : p.kind === 'provider' ? 'Provider' : 'Connection';
    return h(
      'li',
      { class: `problem problem-${b.tone}`, 'data-kind': p.kind, 'data-id': p.id, 'data-state': p.state, 'data-testid': 'problem' },
      h(
        'div',
        { class: 'problem-main' },
        h('span', { class: 'problem-name' }, h('span', { class: 'visually-hidden' }, `${what} `), p.name),
        p.provider && p.kind === 'connection' ? h('span', { class: 'muted small provider-name', title: p.providerId ?? '' }, p.provider) : null,
        badge(b.label, b.tone),
      ),
      h(
        'div',
        { class: 'problem-why' },
        p.reason ? h('span', null, p.reason) : null,
        since ? h('span', { class: 'muted small', title: new Date(since).toLocaleString() }, ` · since ${formatTime(new Date(since))}`) : null,
      ),
      p.state === 'leased' && p.leasedBy
        ? h(
            'p',
            { class: 'small', 'data-testid': 'leased-by' },
            `Held exclusively by ${p.leasedBy}`,
            p.leasedModel ? h('span', null, ' for ', h('code', null, p.leasedModel)) : null,
            until ? ` until ${formatTime(new Date(until))}` : '',
            ': other keys cannot use it.',
          )
        : null,
      p.targets?.length
        ? h(
            'ul',
            { class: 'lock-list small', 'data-testid': 'combo-targets' },
            p.targets.map((t, i) =>
              h(
                'li',
                { 'data-model': t.model },
                h('code', null, t.model),
                ' ',
                t.serving ? h('span', { class: 'muted' }, 'serving') : h('span', null, t.reason ?? 'cannot be served'),
                t.serving ? null : h('span', { class: 'muted small target-back', 'data-testid': 'target-back' }, ` · ${comboBack?.targets[i]?.back ?? NEEDS_A_FIX}`),
                ...(t.serving
                  ? []
                  : (t.connections ?? []).map((c) => {
                      // Several connections under one target: each fix names the connection it acts on.
                      const btns = fixButtons({ id: c.id, name: c.name, state: c.state, ...connFix(c.id) }, c.fixes, { ...fixOpts, nameTarget: true });
                      return btns.length ? h('div', { class: 'btn-row', 'data-connection': c.id }, btns, deniedNote(btns)) : null;
                    })),
              ),
            ),
          )
        : null,
      p.locks.length
        ? h(
            'ul',
            { class: 'lock-list small' },
            p.locks.map((l) =>
              h('li', null, h('code', null, l.model), ' ', h('span', { class: 'muted' }, l.reason ?? ''), ' ', h('span', { 'data-until': String(instant(l.until) ?? ''), class: 'countdown' }, backIn(l.until))),
            ),
          )
        : null,
      h(
        'div',
        { class: 'problem-foot' },
        until
          ? h('span', { class: 'back-at', title: `at ${new Date(until).toLocaleTimeString()} (${exactMs(until - Date.now())})`, 'data-testid': 'back-at' }, h('span', { 'data-until': String(until), class: 'countdown' }, backIn(until)))
          : h(
              'span',
              { class: 'muted small', 'data-testid': 'no-back' },
              p.kind === 'combo' ? 'No target comes back by itself: each needs the fix under it.' : stateInfo(p.state).hint,
            ),
        fixes.length ? h('div', { class: 'btn-row' }, fixes, deniedNote(fixes)) : null,
      ),
    );
  }

  const fixOpts = {
    signal: ctx.signal,
    message: fixMessage,
    onDone: async () => {
      await loadHealth(true);
      brokenArea.querySelector<HTMLElement>('h2')?.focus();
    },
  };

  /** What a problem's fixes act on. */
  function fixTarget(p: Problem): FixTarget {
    return {
      id: p.id,
      name: p.name,
      state: p.state,
      ...(p.providerId ? { providerId: p.providerId } : {}),
      locks: p.locks,
      ...(p.leaseId ? { leaseId: p.leaseId } : {}),
    };
  }

  /** A connection's breaker key, locks and lease from the health model (for a combo target's fixes). */
  function connFix(id: string): Partial<FixTarget> {
    const c = healthStore.connection(id);
    if (!c) return {};
    return { providerId: c.provider, locks: c.locks ?? [], ...(c.leaseId ? { leaseId: c.leaseId } : {}) };
  }

  /** Exclusive session leases (health `leases.active`), with a link to the Leases page. */
  function leasesCard(): HTMLElement {
    const n = activeLeaseCount(health);
    const card = statCard('Leases', 'ov-leases', [['Active', n ?? '—', '', 'active-leases']]);
    card.append(h('p', { class: 'muted small stat-link' }, h('a', { href: href('/leases') }, n ? 'See who holds them' : 'About leases')));
    return card;
  }

  function statCard(title: string, id: string, rows: Array<[string, number | string, string, string?]>): HTMLElement {
    return h(
      'section',
      { class: 'card stat-card', 'aria-labelledby': `${id}-title` },
      h('h2', { id: `${id}-title` }, title),
      h(
        'dl',
        { class: 'stats' },
        rows.map(([label, value, tone, testid]) =>
          h('div', { class: `stat${tone ? ` stat-${tone}` : ''}` }, h('dt', null, label), h('dd', { 'data-testid': testid ?? null }, String(value))),
        ),
      ),
    );
  }

  function renderProviders(): void {
    const model = healthStore.get()?.providers ?? [];
    const legacy = health?.providerHealth ?? {};
    if (model.length === 0) {
      clear(providersArea, emptyState('No provider yet', 'Providers appear with their first connection.'));
      return;
    }
    clear(
      providersArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table table-cards' },
          h('caption', { class: 'visually-hidden' }, 'Health per provider'),
          h('thead', null, h('tr', null, ['Provider', 'State', 'Breaker', 'Serving', 'Last failure', 'Back'].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            null,
            model.map((p) => {
              // The row's state, reason and serving count from the same pass as the tiles (lib/overview-numbers.ts).
              const row = providerRow(p);
              const br = breakerBadge(p.breaker ?? legacy[p.id]?.state);
              const until = row.until;
              return h(
                'tr',
                { 'data-provider': p.id },
                h('th', { scope: 'row', class: 'cell-main', 'data-label': 'Provider' }, h('span', { title: p.id }, row.name)),
                h(
                  'td',
                  { 'data-label': 'State', 'data-testid': 'provider-state' },
                  badge(row.label, row.tone, row.reason),
                  row.reason ? h('small', { class: 'muted block', 'data-testid': 'provider-reason' }, row.reason) : null,
                ),
                h('td', { 'data-label': 'Breaker' }, badge(br.label, br.tone), p.failures ? h('small', { class: 'muted' }, ` ${p.failures} failures`) : null),
                h('td', { class: 'num', 'data-label': 'Serving', 'data-testid': 'provider-serving' }, row.serving),
                h('td', { 'data-label': 'Last failure' }, legacy[p.id]?.lastFailure ? formatDate(legacy[p.id]!.lastFailure!) : '—'),
                h('td', { 'data-label': 'Back' }, until ? h('span', { 'data-until': String(until), class: 'countdown', title: exactMs(until - Date.now()) }, backIn(until)) : '—'),
              );
            }),
          ),
        ),
      ),
    );
  }

  async function togglePause(btn: HTMLButtonElement, paused: boolean): Promise<void> {
    pauseError.replaceChildren();
    btn.disabled = true;
    try {
      const res = await endpoints.setPaused(paused);
      if (ctx.signal.aborted || !health) return;
      health = { ...health, paused: typeof res?.paused === 'boolean' ? res.paused : paused };
      renderHealth();
      statusArea.querySelector<HTMLButtonElement>('.status-line button')?.focus();
    } catch (err) {
      if (ctx.signal.aborted) return;
      btn.disabled = false;
      clear(pauseError, errorBox(err));
    }
  }

  /** Breakers appear with a provider's first request; health events carry only counts. */
  let reloadTimer = 0;
  function reloadHealthSoon(): void {
    window.clearTimeout(reloadTimer);
    reloadTimer = window.setTimeout(() => void loadHealth(true), 300);
  }

  async function loadHealth(quiet = false): Promise<void> {
    try {
      const [hl, conns, team] = await Promise.all([
        endpoints.health(ctx.signal),
        endpoints.listConnections(ctx.signal).catch(() => []),
        endpoints.listInstances(ctx.signal).catch(() => null),
      ]);
      if (ctx.signal.aborted) return;
      renderTeam(team);
      for (const c of conns) names.set(c.id, c.name || c.provider);
      health = hl;
      healthStore.set(hl as HealthReport);
      // User-defined endpoints are named by their prefix in breaker keys ("openai-compatible:lab").
      for (const p of healthStore.get()?.providers ?? []) {
        const i = p.id.indexOf(':');
        if (i > 0 && p.name && !names.has(p.id.slice(i + 1))) names.set(p.id.slice(i + 1), p.name);
      }
      if (!quiet) renderFeed(); // events that arrived before the names did
      renderHealth();
      renderProviders();
      renderBroken();
      if (shownEndpoint !== currentEndpoint()) renderClient(defaultKey.value, defaultKey.error);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      if (quiet && health) return; // keep what is shown; the next refresh retries
      clear(statusArea, h('h2', { id: 'ov-status-title', class: 'visually-hidden' }, 'Gateway status'), errorBox(err, () => void loadHealth()));
      clear(countsArea);
      clear(providersArea);
      clear(brokenArea);
    }
  }

  // ------------------------------------------------------------ release check

  /** Shows what the last release check found; nothing is ever downloaded. */
  function renderUpdate(st: UpdateStatus | null, failure?: string): void {
    if (!st) {
      clear(updateArea);
      return;
    }
    const checkBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'update-check' }, 'Check for updates');
    checkBtn.addEventListener('click', () => void checkNow(checkBtn));
    // The first check turns the daily check on (a settings change): admins only.
    gateWrites([[checkBtn, st.enabled ? ['POST /api/update/check'] : ['PATCH /api/settings', 'POST /api/update/check']]]);
    if (st.available && st.latest) {
      clear(
        updateArea,
        h(
          'p',
          { class: 'alert alert-info', role: 'status', 'data-testid': 'update-available' },
          `Version ${st.latest} is available (this is ${st.current}). `,
          st.url ? h('a', { href: st.url, target: '_blank', rel: 'noopener noreferrer' }, 'Release notes and download') : null,
          st.notes ? h('span', { class: 'block muted small' }, st.notes) : null,
        ),
      );
      return;
    }
    const said = failure
      ? `Update check failed: ${failure}`
      : !st.enabled
        ? 'The update check is off.'
        : st.error
          ? `Update check: ${st.error}`
          : st.checkedAt
            ? `Up to date · checked ${formatTime(new Date(st.checkedAt))}`
            : '';
    // The daily check "Check for updates" turned on is turned off in Settings (issue 42 item 9).
    const offLink = st.enabled ? h('a', { href: href('/settings', { focus: 'updateCheck' }), 'data-testid': 'update-off' }, 'Daily check on: turn it off in Settings') : null;
    clear(updateArea, h('p', { class: 'muted small', 'data-testid': 'update-line' }, said, said ? ' ' : '', checkBtn, offLink ? ' ' : '', offLink));
  }

  async function loadUpdate(): Promise<void> {
    try {
      renderUpdate(await endpoints.updateStatus(ctx.signal));
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      renderUpdate(null); // a build without the check (404) or a viewer: say nothing
    }
  }

  /** "Check for updates" is the user's opt-in: it turns the check on, then checks. */
  async function checkNow(btn: HTMLButtonElement): Promise<void> {
    btn.disabled = true;
    btn.textContent = 'Checking…';
    try {
      const st = await endpoints.updateStatus(ctx.signal);
      if (!st.enabled) await endpoints.patchSettings({ updateCheck: true });
      renderUpdate(await endpoints.checkUpdate());
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      renderUpdate({ enabled: true, current: health?.version ?? '', available: false }, err instanceof Error ? err.message : String(err));
    }
  }

  // ------------------------------------------------------------ team server

  function renderTeam(team: InstanceList | null): void {
    if (!team?.shared) {
      teamArea.hidden = true;
      return;
    }
    teamArea.hidden = false;
    clear(
      teamArea,
      h('h2', { id: 'ov-team-title' }, 'Team server'),
      h('p', { 'data-testid': 'team-summary' }, `Answered by ${team.self} · ${instancesSummary(team)} on one PostgreSQL database.`),
      h('ul', { class: 'team-list' }, team.instances.map((i) => h('li', { title: i.address }, instanceLine(i)))),
    );
  }

  // ------------------------------------------------------------ client endpoint and default key

  const defaultKey: { value: string | null; error: unknown } = { value: null, error: undefined };
  /** Why this role is not shown the default key ("" for admins). */
  let keyDenied = '';
  let shownEndpoint = '';
  const currentEndpoint = () => (typeof health?.endpoint === 'string' && health.endpoint ? health.endpoint : endpointUrl());

  function renderClient(key: string | null, err?: unknown): void {
    defaultKey.value = key;
    defaultKey.error = err;
    const url = currentEndpoint();
    shownEndpoint = url;
    let revealed = false;
    const keyCode = h('code', { class: 'secret-value', 'data-testid': 'default-key' });
    const revealBtn = h('button', { type: 'button', class: 'btn btn-small', 'aria-pressed': 'false' }, 'Reveal');
    const keyNote = h('span', { class: 'copy-note', role: 'status' });
    const urlNote = h('span', { class: 'copy-note', role: 'status' });
    const copyKeyBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Copy key');
    const copyUrlBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Copy URL');
    const show = () => {
      keyCode.textContent = key ? (revealed ? key : maskSecret(key)) : '';
      revealBtn.textContent = revealed ? 'Hide' : 'Reveal';
      revealBtn.setAttribute('aria-pressed', String(revealed));
      revealBtn.setAttribute('aria-label', revealed ? 'Hide the default API key' : 'Reveal the default API key');
    };
    revealBtn.addEventListener('click', () => {
      revealed = !revealed;
      show();
    });
    const copy = async (text: string, what: string, note: HTMLElement) => {
      const ok = await copyText(text);
      note.textContent = ok ? `${what} copied.` : `Could not copy the ${what.toLowerCase()}: select it and copy it yourself.`;
    };
    copyKeyBtn.addEventListener('click', () => key && void copy(key, 'API key', keyNote));
    copyUrlBtn.addEventListener('click', () => void copy(url, 'Endpoint URL', urlNote));
    show();

    let keyRow: HTMLElement;
    if (key) {
      keyRow = h('dd', { class: 'copy-line' }, keyCode, revealBtn, copyKeyBtn, keyNote);
    } else if (keyDenied) {
      keyRow = h('dd', { class: 'muted', 'data-testid': 'default-key-denied' }, keyDenied);
    } else if (err instanceof ApiError && err.status === 404) {
      keyRow = h('dd', null, h('span', { class: 'muted' }, 'There is no default key. '), h('a', { href: href('/keys') }, 'Create a key'), '.');
    } else {
      keyRow = h('dd', null, err ? errorBox(err, () => void loadKey()) : loading('Loading the default key…'));
    }
    clear(
      clientArea,
      h('h2', { id: 'ov-client-title' }, 'Connect a client'),
      h(
        'dl',
        { class: 'kv' },
        h('dt', null, 'Endpoint (OpenAI-compatible)'),
        h('dd', { class: 'copy-line' }, h('code', { 'data-testid': 'endpoint-url' }, url), copyUrlBtn, urlNote),
        h('dt', null, 'Default API key'),
        keyRow,
      ),
      h('p', { class: 'muted small' }, 'Clients send the key as “Authorization: Bearer <key>” and name models as provider/model, e.g. openai/gpt-4o-mini.'),
    );
  }

  async function loadKey(): Promise<void> {
    // Only an admin may read the default key (it reveals it): others are told why, never sent to a 403.
    const denied = whyNot('GET /api/keys/default');
    if (denied) {
      keyDenied = `The default API key is shown to admins only. ${denied}`;
      renderClient(null);
      return;
    }
    renderClient(null);
    try {
      const k = await endpoints.defaultKey(ctx.signal);
      if (ctx.signal.aborted) return;
      renderClient(typeof k?.key === 'string' && k.key ? k.key : null, k?.key ? undefined : new Error('The gateway returned no key.'));
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      renderClient(null, err);
    }
  }

  // ------------------------------------------------------------ live feed

  function feedItem(ev: LiveEvent): HTMLElement {
    const line = describeEvent(ev, names);
    const at = new Date(ev.at);
    return h(
      'li',
      { class: `feed-item feed-${line.tone}`, 'data-type': ev.type },
      h('time', { datetime: ev.at, class: 'feed-time' }, Number.isNaN(at.getTime()) ? '' : formatTime(at)),
      badge(ev.type, line.tone),
      h('span', { class: 'feed-title' }, line.title),
      line.detail ? h('span', { class: 'feed-detail muted' }, line.detail) : null,
    );
  }

  function renderFeed(): void {
    const events = live.recent().slice(0, FEED_SIZE);
    feedList.replaceChildren(...events.map(feedItem));
    feedEmpty.hidden = events.length > 0;
  }

  function renderFeedState(s: LiveStatus): void {
    feedState.dataset['state'] = s.state;
    feedState.textContent =
      s.state === 'open'
        ? 'Connected — updates appear as they happen.'
        : s.state === 'reconnecting'
          ? `Stream dropped; reconnecting (attempt ${s.failures}).`
          : s.state === 'connecting'
            ? 'Connecting to the event stream…'
            : 'Not connected.';
  }

  cleanups.push(
    live.onStatus(renderFeedState),
    live.subscribe('*', (ev) => {
      if (ev.type === 'connection' && ev.data.name) names.set(ev.data.id, ev.data.name);
      // The history keeps health only when its status changes; the feed shows the same.
      if (live.recent()[0] === ev) {
        feedList.prepend(feedItem(ev));
        while (feedList.children.length > FEED_SIZE) feedList.lastElementChild?.remove();
        feedEmpty.hidden = true;
      }
    }),
    live.subscribe('health', (ev) => {
      if (!health) return;
      if ((ev.data.circuitBreakers?.total ?? 0) !== (health.circuitBreakers?.total ?? 0)) reloadHealthSoon();
      health = { ...health, status: ev.data.status };
      if (ev.data.circuitBreakers) health.circuitBreakers = ev.data.circuitBreakers;
      if (ev.data.connectionHealth) health.connectionHealth = ev.data.connectionHealth;
      const leases = (ev.data as { leases?: Health['leases'] }).leases;
      if (leases && typeof leases === 'object') health.leases = leases;
      healthStore.set(ev.data as HealthReport);
      renderHealth();
      renderBroken();
      renderProviders();
    }),
    live.subscribe('lease', (ev) => {
      if (!health) return;
      if (typeof ev.data.active === 'number') {
        health = { ...health, leases: { active: ev.data.active } };
        renderHealth();
      } else reloadHealthSoon();
    }),
    live.subscribe('gateway', (ev) => {
      if (!health) return;
      health = { ...health, paused: ev.data.paused };
      renderHealth();
    }),
    live.subscribe('breaker', (ev) => {
      if (!health) return;
      const d = ev.data;
      health.providerHealth = {
        ...(health.providerHealth ?? {}),
        [d.provider]: {
          ...(health.providerHealth?.[d.provider] ?? {}),
          state: d.state,
          ...(d.failures !== undefined ? { failures: d.failures } : {}),
          ...(d.retryAfterMs !== undefined ? { retryAfterMs: d.retryAfterMs } : {}),
          ...(d.state.toUpperCase() !== 'CLOSED' ? { lastFailure: ev.at } : {}),
        },
      };
      reloadHealthSoon();
    }),
  );
  renderFeed();

  // Every countdown and the uptime tick between health events.
  const ticker = window.setInterval(() => {
    const el = countsArea.querySelector<HTMLElement>('[data-testid="soonest-retry"]');
    if (el) el.textContent = soonestDeadline ? formatCountdown(soonestDeadline - Date.now()) : '—';
    const up = statusArea.querySelector<HTMLElement>('[data-testid="uptime"]');
    if (up) up.textContent = formatDuration(upMs());
    const line = statusArea.querySelector<HTMLElement>('[data-testid="status-line"]');
    if (line) line.textContent = overviewNumbers(healthStore.get()).line;
    for (const cd of root.querySelectorAll<HTMLElement>('.countdown[data-until]')) {
      const t = Number(cd.dataset['until']);
      if (t) cd.textContent = backIn(t);
    }
  }, 1000);
  cleanups.push(() => {
    window.clearInterval(ticker);
    window.clearTimeout(reloadTimer);
  });

  refreshBtn.addEventListener('click', () => {
    void loadHealth();
    void loadKey();
  });
  void loadHealth();
  void loadKey();
  void loadUpdate();
  return () => cleanups.forEach((fn) => fn());
}
