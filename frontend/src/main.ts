import './style.css';
import { ApiError, captureTokenFromHash, clearToken, endpoints, getToken, setUnauthorizedHandler } from './api';
import { clear, emptyState, formatTime, h, type Tone } from './dom';
import { currentPath, findRoute, href, type Route } from './router';
import { renderConnections } from './views/connections';
import { renderKeys } from './views/keys';
import { renderSignIn } from './views/signin';

const PRODUCT = 'OmniRoute';
const DEFAULT_PATH = '/connections';
const HEALTH_INTERVAL_MS = 5000;

// Pages in nav order. To add one (Overview, Agents, Resilience Settings, Logs,
// Model Cooldowns, Cooldown Manager, Combos, Leases…), write src/views/<name>.ts
// exporting a View and list it here.
const routes: Route[] = [
  { path: '/connections', title: 'Connections', view: renderConnections },
  { path: '/keys', title: 'API Keys', view: renderKeys },
];

captureTokenFromHash();

// ---------------------------------------------------------------- frame

const healthDot = h('span', { class: 'dot', 'aria-hidden': 'true' });
const healthText = h('span', null, 'Checking…');
const healthBadge = h('span', { class: 'health health-muted', role: 'status', 'aria-live': 'polite' }, healthDot, h('span', { class: 'visually-hidden' }, 'Gateway health: '), healthText);
const signOutBtn = h('button', { type: 'button', class: 'btn btn-small btn-ghost' }, 'Sign out');
const navLinks = routes.map((r) => h('a', { href: href(r.path), class: 'nav-link', 'data-path': r.path }, r.title));
const nav = h('nav', { class: 'sidenav', 'aria-label': 'Dashboard pages' }, h('ul', null, navLinks.map((a) => h('li', null, a))));
const main = h('main', { id: 'main-content', class: 'content', tabindex: '-1' });
const skip = h('a', { class: 'skip-link', href: '#main-content' }, 'Skip to content');
skip.addEventListener('click', (ev) => {
  ev.preventDefault(); // a real fragment would be taken as a route
  main.focus();
});

const app = document.getElementById('app') ?? document.body;
clear(
  app,
  skip,
  h(
    'header',
    { class: 'topbar' },
    h('a', { class: 'brand', href: href(DEFAULT_PATH) }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, '◆'), PRODUCT, h('span', { class: 'brand-sub' }, 'Dashboard')),
    h('div', { class: 'topbar-right' }, healthBadge, signOutBtn),
  ),
  h('div', { class: 'layout' }, nav, main),
);

// ---------------------------------------------------------------- routing

let current: { controller: AbortController; cleanup: (() => void) | undefined } | null = null;

function teardown(): void {
  if (!current) return;
  current.controller.abort();
  try {
    current.cleanup?.();
  } finally {
    current = null;
  }
}

function render(signInReason?: string): void {
  teardown();
  const signedIn = Boolean(getToken());
  signOutBtn.hidden = !signedIn;
  nav.hidden = !signedIn;

  if (!signedIn) {
    document.title = `Sign in · ${PRODUCT}`;
    renderSignIn(main, {
      ...(signInReason ? { reason: signInReason } : {}),
      onSignedIn: () => {
        render();
        void pollHealth();
      },
    });
    return;
  }

  let path = currentPath();
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
      h('p', null, h('a', { href: href(DEFAULT_PATH) }, 'Go to Connections')),
    );
    return;
  }
  document.title = `${route.title} · ${PRODUCT}`;
  const controller = new AbortController();
  const cleanup = route.view(main, { signal: controller.signal });
  current = { controller, cleanup: cleanup ?? undefined };
}

window.addEventListener('hashchange', () => {
  // A dashboard link pasted into an open tab only changes the fragment.
  const gotToken = captureTokenFromHash();
  render();
  if (gotToken) void pollHealth();
});

setUnauthorizedHandler(() => {
  clearToken();
  render('The gateway rejected the saved token (401). Paste the current management token.');
});

signOutBtn.addEventListener('click', () => {
  clearToken();
  render();
  setHealth('Unknown', 'muted', 'Signed out');
});

// ---------------------------------------------------------------- health badge

function setHealth(text: string, tone: Tone, title: string): void {
  if (healthText.textContent !== text) healthText.textContent = text; // no repeat announcements
  healthBadge.className = `health health-${tone}`;
  healthBadge.title = title;
}

let healthInFlight = false;

async function pollHealth(): Promise<void> {
  if (healthInFlight || document.hidden) return;
  healthInFlight = true;
  const controller = new AbortController();
  const timer = window.setTimeout(() => controller.abort(), HEALTH_INTERVAL_MS - 500);
  const checked = `checked ${formatTime(new Date())}`;
  try {
    const health = await endpoints.health(controller.signal);
    const status = String(health?.status ?? 'unknown').toLowerCase();
    if (status === 'healthy') setHealth('Healthy', 'ok', `Gateway healthy — ${checked}`);
    else if (status === 'degraded') setHealth('Degraded', 'warn', `Gateway degraded — ${checked}`);
    else if (status === 'unhealthy') setHealth('Unhealthy', 'bad', `Gateway unhealthy — ${checked}`);
    else setHealth(status, 'warn', `Gateway status “${status}” — ${checked}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) setHealth('Unknown', 'muted', 'Sign in to see gateway health');
    else setHealth('Unreachable', 'bad', `Gateway did not answer — ${checked}`);
  } finally {
    window.clearTimeout(timer);
    healthInFlight = false;
  }
}

window.setInterval(() => void pollHealth(), HEALTH_INTERVAL_MS);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) void pollHealth();
});

render();
void pollHealth();
