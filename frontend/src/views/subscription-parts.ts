/**
 * The Connections page's subscription parts, kept apart from the page layout:
 * the "Import from…" card, the quota meters and usage wall line of a row, the
 * "Re-import" action of an expired login, and the Claude usage wall opt-ins of
 * the edit dialog.
 */
import { endpoints, type Connection, type ImportRequest, type ImportSource } from '../api';
import { busy, clear, errorBox, field, h, notice } from '../dom';
import { importSource, meters, needsReimport, wallLines } from '../lib/subscription';

/** "A, B and C": the CLIs' names for a sentence. */
export function labelList(labels: string[]): string {
  if (labels.length < 2) return labels.join('');
  return `${labels.slice(0, -1).join(', ')} and ${labels[labels.length - 1]}`;
}

/**
 * "Import from…": reads the CLI's own login file (never changed) and creates
 * or updates its connection. Its choices are the gateway's import sources
 * (GET /api/providers/import, one per provider module that reads a CLI's login).
 */
export function renderImportCard(
  signal: AbortSignal,
  sources: Promise<ImportSource[]>,
  onImported: (c: Connection, created: boolean) => Promise<void>,
): HTMLElement {
  const source = h('select', { id: 'import-source', name: 'source', disabled: true }, h('option', { value: '' }, 'Loading…'));
  const path = h('input', { id: 'import-path', name: 'path', autocomplete: 'off', spellcheck: 'false' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'import-login' }, 'Import login');
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const fieldset = h(
    'fieldset',
    { class: 'form-grid form-grid-2' },
    field('Import from', source, 'A login you already made with that CLI.'),
    field('Credential file', path, 'Optional path (absolute or ~/…); defaults to the CLI’s own file in your home.'),
  );
  const defaults = new Map<string, string>();
  source.addEventListener('change', () => (path.placeholder = defaults.get(source.value) ?? ''));
  const intro = h('p', { class: 'muted small' }, 'The agent CLIs keep their sign-in in your home folder. OmniRoute copies it (encrypted) and refreshes it from then on; the CLI’s file is left untouched.');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'import-title', 'data-testid': 'import-card' },
    h('h2', { id: 'import-title' }, 'Import a subscription login'),
    intro,
    fieldset,
    status,
    h('div', { class: 'form-actions' }, submit),
  );
  void sources.then((list) => {
    if (signal.aborted) return;
    for (const s of list) defaults.set(s.source, s.defaultPath);
    source.replaceChildren(...list.map((s) => h('option', { value: s.source }, s.label)));
    source.disabled = list.length === 0;
    submit.disabled = list.length === 0;
    path.placeholder = list[0]?.defaultPath ?? '';
    if (list.length > 0) intro.textContent = `${labelList(list.map((s) => s.label))} keep their sign-in in your home folder. OmniRoute copies it (encrypted) and refreshes it from then on; the CLI’s file is left untouched.`;
    else clear(status, notice('This gateway reads no CLI login.', 'info'));
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.replaceChildren();
    if (!source.value) return;
    const body: ImportRequest = { source: source.value };
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

/** The "Re-import" button of an expired login, or null; sources are the gateway's import sources. */
export function reimportButton(c: Connection, sources: readonly ImportSource[], onDone: (message: string, ok: boolean) => Promise<void>): HTMLButtonElement | null {
  const src = importSource(c);
  // Only a CLI login is re-imported; a provider's own sign-in is renewed with its sign-in card.
  if (!needsReimport(c) || !src || !sources.some((s) => s.source === src)) return null;
  const label = c.name || c.provider;
  const btn = h('button', { type: 'button', class: 'btn btn-small btn-warn', 'data-focus-key': `${c.id}:reimport`, 'aria-label': `Re-import the login of ${label}` }, 'Re-import');
  btn.title = 'Sign in again with the CLI first, then re-import its login here.';
  btn.addEventListener('click', () =>
    void busy([btn], async () => {
      try {
        await endpoints.importLogin({ source: src });
        await onDone(`Re-imported the login of “${label}”.`, true);
      } catch (err) {
        await onDone(err instanceof Error ? err.message : String(err), false);
      }
    }, { button: btn, label: 'Importing…' }),
  );
  return btn;
}

