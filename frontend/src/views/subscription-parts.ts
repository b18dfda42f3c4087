/**
 * The Connections page's subscription parts, kept apart from the page layout:
 * the "Import from…" card, the GitHub Copilot sign-in card, the quota meters
 * and usage wall line of a row, the
 * "Re-import" action of an expired login, and the Claude usage wall opt-ins of
 * the edit dialog.
 */
import { ApiError, endpoints, type Connection, type ImportRequest } from '../api';
import { busy, clear, errorBox, field, h, notice } from '../dom';
import { importSource, meters, needsReimport, wallLines, withWallOptIns } from '../lib/subscription';
import { safeWebUrl } from '../lib/safeurl';

const SOURCES: Array<[ImportRequest['source'], string]> = [
  ['claude-code', 'Claude Code'],
  ['codex', 'Codex CLI'],
  ['gemini-cli', 'Gemini CLI'],
];

/** "Import from…": reads the CLI's own login file (never changed) and creates or updates its connection. */
export function renderImportCard(signal: AbortSignal, onImported: (c: Connection, created: boolean) => Promise<void>): HTMLElement {
  const source = h('select', { id: 'import-source', name: 'source' }, SOURCES.map(([v, t]) => h('option', { value: v }, t)));
  const path = h('input', { id: 'import-path', name: 'path', autocomplete: 'off', spellcheck: 'false', placeholder: '~/.claude/.credentials.json' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'import-login' }, 'Import login');
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const fieldset = h(
    'fieldset',
    { class: 'form-grid form-grid-2' },
    field('Import from', source, 'A login you already made with that CLI.'),
    field('Credential file', path, 'Optional path (absolute or ~/…); defaults to the CLI’s own file in your home.'),
  );
  const defaults: Record<string, string> = { 'claude-code': '~/.claude/.credentials.json', codex: '~/.codex/auth.json', 'gemini-cli': '~/.gemini/oauth_creds.json' };
  source.addEventListener('change', () => (path.placeholder = defaults[source.value] ?? ''));
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'import-title', 'data-testid': 'import-card' },
    h('h2', { id: 'import-title' }, 'Import a subscription login'),
    h('p', { class: 'muted small' }, 'Claude Code, Codex and Gemini CLI keep their sign-in in your home folder. OmniRoute copies it (encrypted) and refreshes it from then on; the CLI’s file is left untouched.'),
    fieldset,
    status,
    h('div', { class: 'form-actions' }, submit),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.replaceChildren();
    const body: ImportRequest = { source: source.value as ImportRequest['source'] };
    if (path.value.trim()) body.path = path.value.trim();
    const out = await busy([fieldset, submit], async () => {
      try {
        return { ok: await endpoints.importLogin(body) };
      } catch (err) {
        return { err };
      }
    }, { button: submit, label: 'Importing…' });
    if (signal.aborted) return;
    if ('err' in out) {
      clear(status, errorBox(out.err));
      return;
    }
    path.value = '';
    clear(status, notice(`${out.ok.created ? 'Added' : 'Updated'} “${out.ok.connection.name}”.`, 'success'));
    await onImported(out.ok.connection, out.ok.created);
  });
  return form;
}

/** Waits ms, or less when signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

/**
 * "Sign in to GitHub Copilot": GitHub's device login. The gateway asks GitHub
 * for a code, the card shows it with the page to enter it on, and polls until
 * the login is approved (the connection is then created), refused or expired.
 */
export function renderCopilotCard(signal: AbortSignal, onSignedIn: (c: Connection, created: boolean) => Promise<void>): HTMLElement {
  const start = h('button', { type: 'button', class: 'btn btn-primary', 'data-testid': 'copilot-start' }, 'Sign in with GitHub');
  const status = h('div', { class: 'form-status', 'aria-live': 'polite', 'data-testid': 'copilot-status' });
  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'copilot-title', 'data-testid': 'copilot-card' },
    h('h2', { id: 'copilot-title' }, 'Sign in to GitHub Copilot'),
    h('p', { class: 'muted small' }, 'Uses your GitHub Copilot seat. GitHub shows a page where you enter a one-time code; OmniRoute keeps the login (encrypted) and renews Copilot’s short-lived token itself.'),
    status,
    h('div', { class: 'form-actions' }, start),
  );
  start.addEventListener('click', async () => {
    status.replaceChildren();
    start.disabled = true;
    try {
      const flow = await endpoints.startCopilotLogin();
      if (signal.aborted) return;
      // Only a web page becomes a link (the gateway checks it too): a
      // javascript: or data: URL would run in the dashboard's origin.
      const link = safeWebUrl(flow.verificationUri)
        ? h('a', { href: flow.verificationUri, target: '_blank', rel: 'noopener noreferrer', 'data-testid': 'copilot-uri' }, flow.verificationUri)
        : h('code', { 'data-testid': 'copilot-uri' }, flow.verificationUri);
      const code = h('code', { class: 'copilot-code', 'data-testid': 'copilot-code' }, flow.userCode);
      const waiting = h('p', { class: 'muted small', role: 'status' }, 'Waiting for you to approve the login on GitHub…');
      clear(status, h('p', null, 'Open ', link, ' and enter the code ', code), waiting);
      let interval = Math.max(flow.interval, 1) * 1000;
      for (;;) {
        await pause(interval, signal);
        if (signal.aborted) return;
        const p = await endpoints.pollCopilotLogin(flow.flowId, signal);
        if (signal.aborted) return;
        if (p.status === 'pending') {
          if (p.interval) interval = Math.max(p.interval, 1) * 1000;
          continue;
        }
        if (p.status === 'complete' && p.connection) {
          clear(status, notice(`${p.created ? 'Added' : 'Updated'} “${p.connection.name}”.`, 'success'));
          await onSignedIn(p.connection, p.created === true);
          return;
        }
        clear(status, errorBox(new ApiError(200, p.error?.message ?? 'The login did not complete.', p.error?.code ?? p.status, 'login_error')));
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

/** The quota meters and wall state of a subscription connection (nothing for API keys). */
export function subscriptionSummary(c: Connection): HTMLElement | null {
  const ms = meters(c as never);
  const lines = wallLines((c as { wall?: never }).wall);
  if (ms.length === 0 && lines.length === 0) return null;
  return h(
    'div',
    { class: 'subscription', 'data-testid': 'subscription' },
    ms.map((m) =>
      h(
        'small',
        { class: 'block quota-meter', title: m.text },
        h('meter', { min: '0', max: '100', low: '60', high: '85', optimum: '0', value: String(m.percent), 'aria-label': `${m.label} usage` }),
        ' ',
        m.text,
      ),
    ),
    lines.map((l) => h('small', { class: 'block muted', 'data-testid': 'wall-state' }, l)),
  );
}

/** The "Re-import" button of an expired login, or null. */
export function reimportButton(c: Connection, onDone: (message: string, ok: boolean) => Promise<void>): HTMLButtonElement | null {
  const src = importSource(c);
  // A GitHub Copilot login is renewed with the sign-in card, not an import.
  if (!needsReimport(c) || !src || src === 'github-copilot') return null;
  const label = c.name || c.provider;
  const btn = h('button', { type: 'button', class: 'btn btn-small btn-warn', 'data-focus-key': `${c.id}:reimport`, 'aria-label': `Re-import the login of ${label}` }, 'Re-import');
  btn.title = 'Sign in again with the CLI first, then re-import its login here.';
  btn.addEventListener('click', () =>
    void busy([btn], async () => {
      try {
        await endpoints.importLogin({ source: src as ImportRequest['source'] });
        await onDone(`Re-imported the login of “${label}”.`, true);
      } catch (err) {
        await onDone(err instanceof Error ? err.message : String(err), false);
      }
    }, { button: btn, label: 'Importing…' }),
  );
  return btn;
}

/** The usage wall opt-ins of a Claude subscription connection in the edit dialog. */
export function wallOptIns(c: Connection): { element: HTMLElement; value: () => Record<string, unknown> | null } | null {
  if (c.provider !== 'claude') return null;
  const data = (c.providerSpecificData ?? {}) as Record<string, unknown>;
  const low = h('input', { id: 'edit-lowpriority', name: 'lowPriorityMode', type: 'checkbox' });
  low.checked = data['lowPriorityMode'] === true;
  const reset = h('input', { id: 'edit-autolimitreset', name: 'autoLimitReset', type: 'checkbox' });
  reset.checked = data['autoLimitReset'] === true;
  const element = h(
    'fieldset',
    { class: 'form-grid form-grid-2' },
    h('legend', null, 'Claude usage wall'),
    field('Low-priority lane', low, 'At the 5-hour wall, keep going in the slow lane on this account instead of cooling it.'),
    field('Auto limit reset', reset, 'At the wall, claim the weekly session reset first when it is offered.'),
  );
  return { element, value: () => withWallOptIns(c.providerSpecificData, low.checked, reset.checked) };
}

