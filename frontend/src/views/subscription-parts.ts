/**
 * The Connections page's subscription parts, kept apart from the page layout:
 * the "Import from…" card, the quota meters and usage wall line of a row, the
 * "Re-import" action of an expired login, and the Claude usage wall opt-ins of
 * the edit dialog.
 */
import { endpoints, type Connection, type ImportRequest } from '../api';
import { busy, clear, errorBox, field, h, notice } from '../dom';
import { importSource, meters, needsReimport, wallLines } from '../lib/subscription';

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
  // Only a CLI login is re-imported; a provider's own sign-in is renewed with its sign-in card.
  if (!needsReimport(c) || !src || !SOURCES.some(([v]) => v === src)) return null;
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

