import './style.css';
import { ApiError, api, captureTokenFromHash, clearToken, endpoints, getSession, isSignedIn, roleAtLeast, setSession, setUnauthorizedHandler, type AuthInfo } from './api';
import { clear, emptyState, formatTime, h, loading, type Tone } from './dom';
import { healthBadge } from './lib/health';
import { healthStore, statusLine, type HealthReport } from './lib/healthmodel';
import { setWords } from './lib/words';
import { live, type LiveStatus } from './live';
import { findRoute, href, parseHash, type Route } from './router';
import { applyTheme, effectiveTheme, loadTheme, nextTheme, saveTheme, type ThemePref } from './theme';
import { renderAgents } from './views/agents';
import { renderCombos } from './views/combos';
import { renderConnections } from './views/connections';
import { renderCooldowns } from './views/cooldowns';
import { renderKeys } from './views/keys';
import { renderLeases } from './views/leases';
import { renderRules } from './views/rules';
import { renderFlags } from './views/flags';
import { renderBackup } from './views/backup';
import { renderLockoutSettings } from './views/lockout-settings';
import { renderLogs } from './views/logs';
import { renderModelCooldowns } from './views/model-cooldowns';
import { renderOverview } from './views/overview';
import { renderPlayground } from './views/playground';
import { renderResilience } from './views/resilience';
import { renderUsage } from './views/usage';
import { renderSignIn } from './views/signin';
import { renderAudit } from './views/audit';
import { renderUsers } from './views/users';
import { renderTokens } from './views/tokens';
import { canSend, whyNot } from './views/role-gate';
import { renderSettings } from './views/settings';

const PRODUCT = 'OmniRoute';
const DEFAULT_PATH = '/overview';
/** Health is polled only while the live stream is down; events keep it current otherwise. */
const HEALTH_POLL_MS = 5000;

// Pages in nav order: the extension point for later pages.
// Write src/views/<name>.ts exporting a View and add it here (with `group`
// to list it under a nav heading); see README.md.
const routes: readonly Route[] = [
  { path: '/overview', title: 'Overview', view: renderOverview },
  { path: '/connections', title: 'Connections', view: renderConnections },
  { path: '/combos', title: 'Combos', view: renderCombos },
  { path: '/keys', title: 'API Keys', view: renderKeys },
  { path: '/agents', title: 'Agents', view: renderAgents },
  { path: '/usage', title: 'Usage', view: renderUsage },
  { path: '/logs', title: 'Logs', view: renderLogs },
  { path: '/playground', title: 'Playground', view: renderPlayground, needs: 'POST /api/playground/' },
  { path: '/cooldowns', title: 'Cooldown Manager', view: renderCooldowns, group: 'Resilience' },
  { path: '/model-cooldowns', title: 'Model Cooldowns', view: renderModelCooldowns, group: 'Resilience' },
  { path: '/leases', title: 'Leases', view: renderLeases, group: 'Resilience' },
  { path: '/lockout-settings', title: 'Lockout Settings', view: renderLockoutSettings, group: 'Resilience' },
  { path: '/resilience', title: 'Resilience Settings', view: renderResilience, group: 'Resilience' },
  { path: '/rules', title: 'Rules', view: renderRules, group: 'Resilience' },
  { path: '/feature-flags', title: 'Feature Flags', view: renderFlags, group: 'Resilience' },
  { path: '/settings', title: 'Settings', view: renderSettings, group: 'Settings' },
  { path: '/backup', title: 'Backup & Restore', view: renderBackup, group: 'Settings' },
  { path: '/users', title: 'Users', view: renderUsers, group: 'People', needs: 'GET /api/users' },
  { path: '/tokens', title: 'Tokens', view: renderTokens, group: 'People' },
  { path: '/audit', title: 'Audit Log', view: renderAudit, group: 'People', needs: 'GET /api/audit' },
];

applyTheme(loadTheme());
captureTokenFromHash();

// ---------------------------------------------------------------- frame

const healthDot = h('span', { class: 'dot', 'aria-hidden': 'true' });
const healthText = h('span', null, 'Checking…');
const healthBadgeEl = h(
  'a',
  { class: 'health health-muted', href: href('/overview'), 'aria-live': 'polite' },
  healthDot,
  h('span', { class: 'visually-hidden' }, 'Gateway health: '),
  healthText,
);
const liveText = h('span', null, '');
const liveIndicator = h('span', { class: 'live-indicator', 'data-state': 'idle' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), liveText);
const themeBtn = h('button', { type: 'button', class: 'btn btn-small btn-ghost theme-toggle' });
const signOutBtn = h('button', { type: 'button', class: 'btn btn-small btn-ghost' }, 'Sign out');
const navLinks = routes.map((r) => h('a', { href: href(r.path), class: 'nav-link', 'data-path': r.path }, r.title));
const nav = h('nav', { class: 'sidenav', id: 'sidenav', 'aria-label': 'Dashboard pages' }, h('ul', null, navItems()));
// Narrow windows fold the sidebar behind a Menu button (CSS shows it below 900 px).
const menuBtn = h('button', { type: 'button', class: 'btn btn-small btn-ghost menu-toggle', 'aria-controls': 'sidenav', 'aria-expanded': 'false' }, '☰ Menu');
function setMenu(open: boolean): void {
  document.body.classList.toggle('nav-open', open);
  menuBtn.setAttribute('aria-expanded', String(open));
}
menuBtn.addEventListener('click', () => setMenu(!document.body.classList.contains('nav-open')));
nav.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape' && document.body.classList.contains('nav-open')) {
    setMenu(false);
    menuBtn.focus();
  }
});

/** Nav entries: ungrouped pages as links, consecutive pages of a group under its heading. */
function navItems(): HTMLElement[] {
  const items: HTMLElement[] = [];
  let groupList: HTMLUListElement | null = null;
  let groupName: string | undefined;
  routes.forEach((r, i) => {
    const li = h('li', null, navLinks[i]!);
    if (!r.group) {
      groupList = null;
      groupName = undefined;
      items.push(li);
      return;
    }
    if (!groupList || groupName !== r.group) {
      groupName = r.group;
      const id = `nav-group-${r.group.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
      groupList = h('ul', { class: 'nav-sublist', 'aria-labelledby': id });
      items.push(h('li', { class: 'nav-group' }, h('span', { class: 'nav-heading', id }, r.group), groupList));
    }
    groupList.appendChild(li);
  });
  return items;
}
const main = h('main', { id: 'main-content', class: 'content', tabindex: '-1' });
const skip = h('a', { class: 'skip-link', href: '#main-content' }, 'Skip to content');
skip.addEventListener('click', (ev) => {
  ev.preventDefault(); // a real fragment would be taken as a route
  main.focus();
});

/**
 * Narrow windows show tables as cards: each cell is labelled with its column
 * header (data-label, shown by CSS), for every page, including rows added later.
 */
function labelTables(root: ParentNode): void {
  for (const table of root.querySelectorAll<HTMLTableElement>('table')) {
    const heads = [...(table.tHead?.rows[0]?.cells ?? [])].map((c) => (c.textContent ?? '').trim());
    if (!heads.length) continue;
    for (const body of table.tBodies) {
      for (const row of body.rows) {
        let col = 0;
        for (const cell of row.cells) {
          if (!cell.hasAttribute('data-label')) cell.setAttribute('data-label', heads[col] ?? '');
          col += cell.colSpan || 1;
        }
      }
    }
  }
}
let labelQueued = false;
new MutationObserver(() => {
  if (labelQueued) return;
  labelQueued = true;
  queueMicrotask(() => {
    labelQueued = false;
    labelTables(main);
  });
}).observe(main, { childList: true, subtree: true });

const app = document.getElementById('app') ?? document.body;
clear(
  app,
  skip,
  h(
    'header',
    { class: 'topbar' },
    menuBtn,
    h('a', { class: 'brand', href: href(DEFAULT_PATH) }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, '◆'), PRODUCT, h('span', { class: 'brand-sub' }, 'Dashboard')),
    h('div', { class: 'topbar-right' }, liveIndicator, healthBadgeEl, themeBtn, signOutBtn),
  ),
  h('div', { class: 'layout' }, nav, main),
);

// ---------------------------------------------------------------- theme

let theme: ThemePref = loadTheme();
const darkQuery = window.matchMedia?.('(prefers-color-scheme: dark)');

function renderThemeButton(): void {
  const shown = effectiveTheme(theme, Boolean(darkQuery?.matches));
  const icon = theme === 'auto' ? '◐' : shown === 'dark' ? '☾' : '☀';
  const name = theme === 'auto' ? `Auto (${shown})` : theme === 'dark' ? 'Dark' : 'Light';
  themeBtn.replaceChildren(h('span', { 'aria-hidden': 'true' }, icon), ` ${name}`);
  themeBtn.setAttribute('aria-label', `Color theme: ${name}. Switch to ${nextTheme(theme)}.`);
  themeBtn.dataset['theme'] = theme;
}

themeBtn.addEventListener('click', () => {
  theme = nextTheme(theme);
  saveTheme(theme);
  applyTheme(theme);
  renderThemeButton();
});
darkQuery?.addEventListener?.('change', renderThemeButton);
renderThemeButton();

// ---------------------------------------------------------------- routing

let current: { controller: AbortController; cleanup: (() => void) | undefined } | null = null;
/** The first render leaves focus alone, so Tab starts at the skip link. */
let firstRender = true;

function teardown(): void {
  if (!current) return;
  current.controller.abort();
  try {
    current.cleanup?.();
  } finally {
    current = null;
  }
}

/** How to sign in (GET /api/auth), read when the sign-in page is shown. */
let authInfo: AuthInfo | null = null;

/** Learns who the dashboard acts as (a token's role, or a session cookie's user). */
async function refreshSession(): Promise<void> {
  try {
    setSession(await endpoints.session());
  } catch {
    setSession(null);
  }
}

/** The role the nav is shown for: the session's; a token whose role is unknown is the instance's (admin). */
function currentRole(): string {
  return getSession()?.role ?? 'admin';
}

/** Why the sign-in page is shown (a rejected token, an ended session) until the next sign-in. */
let signInNote: string | undefined;

function render(signInReason: string | undefined = signInNote): void {
  teardown();
  // A dialog belongs to the page that opened it: navigation closes it.
  for (const d of document.querySelectorAll<HTMLDialogElement>('dialog[open]')) d.close();
  setMenu(false);
  const signedIn = isSignedIn();
  signOutBtn.hidden = !signedIn;
  nav.hidden = !signedIn;
  menuBtn.hidden = !signedIn;
  liveIndicator.hidden = !signedIn;

  if (!signedIn) {
    document.title = `Sign in · ${PRODUCT}`;
    if (authInfo === null) {
      clear(main, loading('Loading…'));
      endpoints.authInfo().then(
        (info) => (authInfo = info),
        () => (authInfo = { users: false, sso: false, team: false }),
      ).finally(() => {
        if (!isSignedIn()) render(signInReason);
      });
      return;
    }
    renderSignIn(main, {
      ...(signInReason ? { reason: signInReason } : {}),
      users: authInfo.users,
      sso: authInfo.sso,
      onSignedIn: () => {
        signInNote = undefined;
        void refreshSession().then(() => {
          render();
          live.restart();
          void pollHealth();
        });
      },
    });
    return;
  }
  routes.forEach((r, i) => {
    const li = navLinks[i]!.closest('li');
    if (li) li.hidden = Boolean((r.role && !roleAtLeast(currentRole(), r.role)) || (r.needs && !canSend(r.needs)));
  });
  for (const g of nav.querySelectorAll<HTMLElement>('.nav-group')) {
    g.hidden = [...g.querySelectorAll<HTMLElement>('.nav-sublist > li')].every((li) => li.hidden);
  }

  let { path, params } = parseHash(location.hash);
  if (path === '/') {
    path = DEFAULT_PATH;
    history.replaceState(history.state, '', href(path));
  }
  for (const a of navLinks) {
    if (a.dataset['path'] === path) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }

  const route = findRoute(routes, path);
  if (!route) {
    document.title = `Not found · ${PRODUCT}`;
    clear(
      main,
      h('h1', { tabindex: '-1' }, 'Page not found'),
      emptyState(`There is no page at “${path}”.`),
      h('p', null, h('a', { href: href(DEFAULT_PATH) }, 'Go to the Overview')),
    );
    return;
  }
  document.title = `${route.title} · ${PRODUCT}`;
  const denied = route.needs ? whyNot(route.needs) : '';
  if (denied) {
    // A page the role cannot use: why, never a page that loads into a 403.
    clear(main, h('h1', { tabindex: '-1' }, route.title), h('p', { class: 'alert alert-info', role: 'status', 'data-testid': 'role-denied' }, `This page: ${denied}`));
    if (!firstRender) main.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
    firstRender = false;
    return;
  }
  const controller = new AbortController();
  const cleanup = route.view(main, { signal: controller.signal, params });
  current = { controller, cleanup: cleanup ?? undefined };
  // After a route change, focus the page heading so screen readers announce
  // the new page and Tab continues from there.
  if (!firstRender) main.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
  firstRender = false;
}

window.addEventListener('hashchange', () => {
  // A dashboard link pasted into an open tab only changes the fragment.
  const gotToken = captureTokenFromHash();
  if (!gotToken) {
    render();
    return;
  }
  void refreshSession().then(() => {
    render();
    live.restart();
    void pollHealth();
  });
});

setUnauthorizedHandler(() => {
  const wasUser = getSession()?.kind === 'user';
  clearToken();
  setSession(null);
  authInfo = null;
  live.stop();
  signInNote = wasUser ? 'Your session ended (401). Sign in again.' : 'The gateway rejected the saved token (401). Paste the current management token.';
  render();
  setHealth('Unknown', 'muted', 'Sign in to see gateway health');
});

signOutBtn.addEventListener('click', () => {
  if (getSession()?.kind === 'user') void endpoints.logout().catch(() => undefined);
  setSession(null);
  authInfo = null;
  signInNote = undefined;
  clearToken();
  healthStore.clear();
  live.stop();
  render();
  setHealth('Unknown', 'muted', 'Signed out');
});

// ---------------------------------------------------------------- live stream + health badge

function setHealth(text: string, tone: Tone, title: string): void {
  if (healthText.textContent !== text) healthText.textContent = text; // no repeat announcements
  healthBadgeEl.className = `health health-${tone}`;
  healthBadgeEl.title = title;
}

function showHealthStatus(status: unknown, source: string): void {
  const b = healthBadge(status);
  const line = statusLine(healthStore.get());
  setHealth(b.label, b.tone, `${line ? `${line}. ` : ''}${b.description} (${source})`);
}

live.subscribe('health', (ev) => {
  healthStore.set(ev.data as HealthReport);
  showHealthStatus(ev.data.status, `live, ${formatTime(new Date(ev.at))}`);
});

let reconnectTicker = 0;
function renderLiveStatus(s: LiveStatus): void {
  liveIndicator.dataset['state'] = s.state;
  window.clearInterval(reconnectTicker);
  const text = (): string => {
    switch (s.state) {
      case 'open':
        return 'Live';
      case 'connecting':
        return 'Connecting…';
      case 'reconnecting': {
        const secs = s.retryAt ? Math.max(0, Math.ceil((s.retryAt - Date.now()) / 1000)) : 0;
        return secs > 0 ? `Reconnecting in ${secs} s` : 'Reconnecting…';
      }
      default:
        return 'Offline';
    }
  };
  liveText.textContent = text();
  liveIndicator.title =
    s.state === 'open' ? 'Live updates from the gateway are on.' : 'Live updates are paused; the pages still work and refresh on demand.';
  if (s.state === 'reconnecting') reconnectTicker = window.setInterval(() => (liveText.textContent = text()), 1000);
}
live.onStatus(renderLiveStatus);
// When the stream drops, find out at once whether the gateway is down (polling takes over).
live.onStatus((s) => {
  if (s.state === 'reconnecting' && s.failures === 1) void pollHealth();
});

// EventSource hides the HTTP status of a failed connect; a management request
// finds out whether the token was rejected (its 401 signs out).
live.setConnectFailureHandler((failures) => {
  if (failures === 1 || failures % 5 === 0) void api.get('/api/settings').catch(() => undefined);
});

let healthInFlight = false;

let wordsLoaded = false;

async function pollHealth(): Promise<void> {
  if (healthInFlight || document.hidden || !isSignedIn()) return;
  healthInFlight = true;
  const controller = new AbortController();
  const timer = window.setTimeout(() => controller.abort(), HEALTH_POLL_MS - 500);
  const checked = `checked ${formatTime(new Date())}`;
  try {
    if (!wordsLoaded) {
      // The catalogue of plain words, once per page load (GET /api/words);
      // until it arrives codes read as their words.
      wordsLoaded = true;
      endpoints.words().then(setWords, () => (wordsLoaded = false));
    }
    const health = await endpoints.health(controller.signal);
    healthStore.set(health as HealthReport);
    showHealthStatus(health?.status, checked);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) setHealth('Unknown', 'muted', 'Sign in to see gateway health');
    else setHealth('Unreachable', 'bad', `Gateway did not answer — ${checked}`);
  } finally {
    window.clearTimeout(timer);
    healthInFlight = false;
  }
}

window.setInterval(() => {
  if (live.getStatus().state !== 'open') void pollHealth();
}, HEALTH_POLL_MS);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden && live.getStatus().state !== 'open') void pollHealth();
});

// A token, or a session cookie (a password or single sign-on sign-in): who are we?
void refreshSession().then(() => {
  render();
  if (isSignedIn()) {
    live.start();
    void pollHealth();
  } else {
    setHealth('Unknown', 'muted', 'Sign in to see gateway health');
  }
});
