import { ApiError, endpoints, isAbortError, type Health, type ProviderHealth } from '../api';
import { badge, clear, copyText, emptyState, errorBox, formatDate, formatTime, h, loading } from '../dom';
import { formatCountdown, formatDuration, maskSecret } from '../lib/format';
import { breakerBadge, healthBadge, providerLabel } from '../lib/health';
import { activeLeaseCount } from '../lib/leases';
import { describeEvent, type LiveEvent } from '../lib/sse';
import { live, type LiveStatus } from '../live';
import { href, type ViewContext } from '../router';

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
  const cleanups: Array<() => void> = [];
  const pauseError = h('div', { class: 'pause-error' });

  const heading = h('h1', { tabindex: '-1' }, 'Overview');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const statusArea = h('section', { class: 'card status-card', 'aria-labelledby': 'ov-status-title' });
  const countsArea = h('div', { class: 'stat-grid' });
  const providersArea = h('div', { class: 'list-area' });
  const clientArea = h('section', { class: 'card', 'aria-labelledby': 'ov-client-title' });
  const feedState = h('p', { class: 'feed-state muted' });
  const feedList = h('ol', { class: 'feed', role: 'log', 'aria-relevant': 'additions', 'aria-label': 'Live events, newest first' });
  const feedEmpty = emptyState('Waiting for events…', 'Cooldowns, breaker changes and requests appear here as they happen.');

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h('p', { class: 'muted page-intro' }, 'Gateway health, how to connect a client, and what is happening right now.'),
    statusArea,
    h('section', { 'aria-label': 'Counts' }, countsArea),
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
  clear(providersArea, loading('Loading provider health…'));

  // ------------------------------------------------------------ health and counts

  function renderHealth(): void {
    if (!health) return;
    const b = healthBadge(health.status);
    const meta = [
      health.version ? `version ${health.version}` : '',
      typeof health.uptime === 'number' ? `up ${formatDuration(health.uptime * 1000)}` : '',
    ].filter(Boolean);
    const paused = health.paused === true;
    const pauseBtn = h('button', { type: 'button', class: `btn btn-small${paused ? ' btn-primary' : ''}` }, paused ? 'Resume gateway' : 'Pause gateway');
    pauseBtn.addEventListener('click', () => void togglePause(pauseBtn, !paused));
    clear(
      statusArea,
      h('h2', { id: 'ov-status-title', class: 'visually-hidden' }, 'Gateway status'),
      h(
        'div',
        { class: 'status-line' },
        h('span', { class: `health health-${b.tone} health-large`, 'data-testid': 'overview-health' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), b.label),
        h('div', { class: 'status-text' }, h('p', { class: 'status-desc' }, b.description), meta.length ? h('p', { class: 'muted small' }, meta.join(' · ')) : null),
        typeof health.paused === 'boolean' ? pauseBtn : null,
      ),
      paused
        ? h('p', { class: 'alert alert-warn', role: 'status', 'data-testid': 'paused' }, 'The gateway is paused: clients get 503 GATEWAY_PAUSED until you resume it.')
        : null,
      pauseError,
      health.setupComplete === false
        ? h('p', { class: 'alert alert-info' }, 'No connection yet. ', h('a', { href: href('/connections') }, 'Add a provider connection'), ' so the gateway has somewhere to route requests.')
        : null,
    );
    const cb = health.circuitBreakers ?? {};
    const ch = health.connectionHealth ?? {};
    soonestDeadline = ch.soonestRetryAfterMs ? Date.now() + ch.soonestRetryAfterMs : null;
    clear(
      countsArea,
      statCard('Circuit breakers', 'ov-cb', [
        ['Open', cb.open ?? 0, cb.open ? 'bad' : ''],
        ['Half-open', cb.halfOpen ?? 0, cb.halfOpen ? 'warn' : ''],
        ['Degraded', cb.degraded ?? 0, cb.degraded ? 'warn' : ''],
        ['Closed', cb.closed ?? 0, ''],
        ['Total', cb.total ?? 0, ''],
      ]),
      statCard('Connections', 'ov-conn', [
        ['Total', ch.total ?? 0, ''],
        ['Cooling down', ch.coolingDown ?? 0, ch.coolingDown ? 'warn' : ''],
        ['Out of service', ch.terminal ?? 0, ch.terminal ? 'bad' : ''],
        ['Soonest retry', soonestDeadline ? formatCountdown(soonestDeadline - Date.now()) : '—', '', 'soonest-retry'],
      ]),
      leasesCard(),
    );
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
    const entries = Object.entries(health?.providerHealth ?? {}).sort(([a], [b]) => a.localeCompare(b));
    if (entries.length === 0) {
      clear(providersArea, emptyState('No provider breaker yet', 'A provider gets a breaker when it handles its first request.'));
      return;
    }
    clear(
      providersArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table' },
          h('caption', { class: 'visually-hidden' }, 'Circuit breaker per provider'),
          h('thead', null, h('tr', null, ['Provider', 'Breaker', 'Failures', 'Last failure', 'Retry after'].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            null,
            entries.map(([key, p]: [string, ProviderHealth]) => {
              const b = breakerBadge(p.state);
              return h(
                'tr',
                null,
                h('th', { scope: 'row', class: 'cell-main' }, providerLabel(key, names)),
                h('td', null, badge(b.label, b.tone)),
                h('td', { class: 'num' }, p.failures ?? 0),
                h('td', null, p.lastFailure ? formatDate(p.lastFailure) : '—'),
                h('td', null, p.retryAfterMs ? formatDuration(p.retryAfterMs) : '—'),
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
      const [hl, conns] = await Promise.all([
        endpoints.health(ctx.signal),
        endpoints.listConnections(ctx.signal).catch(() => []),
      ]);
      if (ctx.signal.aborted) return;
      for (const c of conns) names.set(c.id, c.name || c.provider);
      health = hl;
      renderHealth();
      renderProviders();
      if (shownEndpoint !== currentEndpoint()) renderClient(defaultKey.value, defaultKey.error);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      if (quiet && health) return; // keep what is shown; the next refresh retries
      clear(statusArea, h('h2', { id: 'ov-status-title', class: 'visually-hidden' }, 'Gateway status'), errorBox(err, () => void loadHealth()));
      clear(countsArea);
      clear(providersArea);
    }
  }

  // ------------------------------------------------------------ client endpoint and default key

  const defaultKey: { value: string | null; error: unknown } = { value: null, error: undefined };
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
      renderHealth();
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
      renderProviders();
    }),
  );
  renderFeed();

  // The soonest-retry countdown ticks between health events.
  const ticker = window.setInterval(() => {
    const el = countsArea.querySelector<HTMLElement>('[data-testid="soonest-retry"]');
    if (el) el.textContent = soonestDeadline ? formatCountdown(soonestDeadline - Date.now()) : '—';
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
  return () => cleanups.forEach((fn) => fn());
}
