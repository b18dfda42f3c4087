/**
 * The Connections page's sign-in panels: one card per provider whose module
 * has a device sign-in (GET /api/providers/login). The gateway asks the
 * provider for a code, the card shows it with the page to enter it on, and
 * polls until the login is approved (the connection is then created),
 * refused or expired. Nothing here names a provider: the title, hint and
 * site come from the API.
 */
import { ApiError, endpoints, type Connection, type LoginProvider } from '../api';
import { clear, errorBox, h, notice } from '../dom';
import { safeWebUrl } from '../lib/safeurl';

/** Waits ms, or less when signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

/** The panel's name in test ids and element ids: the provider's login command, kept to [a-z0-9-]. */
export function loginSlug(p: Pick<LoginProvider, 'command' | 'id'>): string {
  const slug = (p.command || p.id).toLowerCase().replace(/[^a-z0-9-]+/g, '-');
  return slug || 'login';
}

/** The sign-in cards of every provider with a device login, filled once the list arrives. */
export function renderLoginCards(signal: AbortSignal, onSignedIn: (c: Connection, created: boolean) => Promise<void>): HTMLElement {
  const area = h('div', { class: 'login-flows', 'data-testid': 'login-flows' });
  void endpoints
    .listLogins(signal)
    .then((list) => {
      if (signal.aborted) return;
      clear(area, list.filter((p) => p.kind === 'device').map((p) => renderDeviceLoginCard(p, signal, onSignedIn)));
    })
    .catch((err) => {
      if (!signal.aborted) clear(area, errorBox(err));
    });
  return area;
}

/** "Sign in to <provider>": its device login, started and polled through the gateway. */
export function renderDeviceLoginCard(p: LoginProvider, signal: AbortSignal, onSignedIn: (c: Connection, created: boolean) => Promise<void>): HTMLElement {
  const slug = loginSlug(p);
  const start = h('button', { type: 'button', class: 'btn btn-primary', 'data-testid': `${slug}-start` }, `Sign in with ${p.site || p.name}`);
  const status = h('div', { class: 'form-status', 'aria-live': 'polite', 'data-testid': `${slug}-status` });
  const card = h(
    'section',
    { class: 'card login-flow', 'aria-labelledby': `${slug}-title`, 'data-testid': `${slug}-card` },
    h('h2', { id: `${slug}-title` }, `Sign in to ${p.name}`),
    p.hint ? h('p', { class: 'muted small' }, p.hint) : null,
    status,
    h('div', { class: 'form-actions' }, start),
  );
  start.addEventListener('click', async () => {
    status.replaceChildren();
    start.disabled = true;
    try {
      const flow = await endpoints.startLogin(p.id);
      if (signal.aborted) return;
      // Only a web page becomes a link (the gateway checks it too): a
      // javascript: or data: URL would run in the dashboard's origin.
      const link = safeWebUrl(flow.verificationUri)
        ? h('a', { href: flow.verificationUri, target: '_blank', rel: 'noopener noreferrer', 'data-testid': `${slug}-uri` }, flow.verificationUri)
        : h('code', { 'data-testid': `${slug}-uri` }, flow.verificationUri);
      const code = h('code', { class: 'login-code', 'data-testid': `${slug}-code` }, flow.userCode);
      const waiting = h('p', { class: 'muted small', role: 'status' }, `Waiting for you to approve the login on ${p.site || p.name}…`);
      clear(status, h('p', null, 'Open ', link, ' and enter the code ', code), waiting);
      let interval = Math.max(flow.interval, 1) * 1000;
      for (;;) {
        await pause(interval, signal);
        if (signal.aborted) return;
        const r = await endpoints.pollLogin(p.id, flow.flowId, signal);
        if (signal.aborted) return;
        if (r.status === 'pending') {
          if (r.interval) interval = Math.max(r.interval, 1) * 1000;
          continue;
        }
        if (r.status === 'complete' && r.connection) {
          clear(status, notice(`${r.created ? 'Added' : 'Updated'} “${r.connection.name}”.`, 'success'));
          await onSignedIn(r.connection, r.created === true);
          return;
        }
        clear(status, errorBox(new ApiError(200, r.error?.message ?? 'The login did not complete.', r.error?.code ?? r.status, 'login_error')));
        return;
      }
    } catch (err) {
      if (!signal.aborted) clear(status, errorBox(err));
    } finally {
      start.disabled = false;
    }
  });
  return card;
}
