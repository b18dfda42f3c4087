import { endpoints, isAbortError, type Connection, type NewConnection, type TestResult } from '../api';
import {
  badge,
  busy,
  clear,
  confirmDialog,
  emptyState,
  errorBox,
  field,
  formatTime,
  h,
  loading,
  notice,
  parseTime,
  type Tone,
} from '../dom';
import type { ViewContext } from '../router';

export const PROVIDERS = [
  'openai',
  'anthropic',
  'gemini',
  'openrouter',
  'glm',
  'deepseek',
  'groq',
  'minimax',
  'agentrouter',
  'opencode',
  'ollama-local',
  'lm-studio',
  'openai-compatible',
  'anthropic-compatible',
];

/** Local servers that usually run without an API key. */
const KEYLESS_PROVIDERS = new Set(['ollama-local', 'lm-studio']);

const needsBaseUrl = (provider: string) => provider.trim().toLowerCase().endsWith('-compatible');

export function connectionStatus(c: Connection, now = Date.now()): { label: string; tone: Tone; detail?: string } {
  if (!c.isActive) return { label: 'Disabled', tone: 'muted' };
  const until = parseTime(c.rateLimitedUntil);
  if (until && until.getTime() > now) {
    const level = c.backoffLevel ? ` (backoff level ${c.backoffLevel})` : '';
    return { label: 'Rate limited', tone: 'warn', detail: `until ${formatTime(until)}${level}` };
  }
  // The gateway writes "active", "unavailable" (cooling down) or a terminal
  // state: "banned", "expired", "credits_exhausted".
  const raw = (c.testStatus ?? '').trim();
  const label = capitalize(raw.replace(/_/g, ' '));
  switch (raw.toLowerCase()) {
    case 'active':
    case 'ok':
    case 'success':
    case 'healthy':
      return { label: 'OK', tone: 'ok' };
    case 'unavailable':
      return { label: 'Cooling down', tone: 'warn' };
    case 'banned':
    case 'expired':
    case 'credits_exhausted':
    case 'error':
    case 'failed':
    case 'invalid':
    case 'unauthorized':
    case 'unhealthy':
      return { label, tone: 'bad' };
    case '':
    case 'unknown':
    case 'untested':
      return { label: 'Untested', tone: 'muted' };
    default:
      return { label, tone: 'warn' };
  }
}

function capitalize(s: string): string {
  return s ? s.charAt(0).toUpperCase() + s.slice(1) : s;
}

function describeTest(r: TestResult): { ok: boolean; text: string } {
  if (r.ok) return { ok: true, text: r.latencyMs != null ? `Test passed · ${Math.round(r.latencyMs)} ms` : 'Test passed' };
  const e = r.error;
  const msg = typeof e === 'string' ? e : e?.message || 'Test failed';
  return { ok: false, text: `Test failed: ${msg}` };
}

export function renderConnections(root: HTMLElement, ctx: ViewContext): void {
  const testResults = new Map<string, { ok: boolean; text: string }>();
  let connections: Connection[] | null = null;

  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const listArea = h('div', { class: 'list-area', 'aria-live': 'polite' });
  const rowMessage = h('div', { class: 'row-message' });
  const heading = h('h1', { tabindex: '-1' }, 'Connections');

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h('p', { class: 'muted page-intro' }, 'Upstream providers the gateway routes requests to, tried in priority order.'),
    rowMessage,
    h('section', { 'aria-labelledby': 'connections-list-title' }, h('h2', { id: 'connections-list-title', class: 'visually-hidden' }, 'Connection list'), listArea),
    renderAddForm(ctx, async (created) => {
      clear(rowMessage, notice(`Added connection “${created.name || created.provider}”.`, 'success'));
      await load(true);
    }),
  );

  async function load(quiet = false, focusKey?: string): Promise<void> {
    if (!quiet || connections === null) {
      clear(listArea, loading('Loading connections…'));
      listArea.setAttribute('aria-busy', 'true');
    }
    refreshBtn.disabled = true;
    try {
      const list = await endpoints.listConnections(ctx.signal);
      if (ctx.signal.aborted) return;
      connections = sortConnections(list);
      renderList(focusKey);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      listArea.removeAttribute('aria-busy');
      refreshBtn.disabled = false;
    }
  }

  function renderList(restoreFocus?: string): void {
    // Keep keyboard focus on the same control across a re-render.
    const focusKey = restoreFocus ?? (document.activeElement as HTMLElement | null)?.dataset?.['focusKey'];
    const list = connections ?? [];
    if (list.length === 0) {
      clear(listArea, emptyState('No connections yet — add one below', 'Add an API key for a provider and the gateway starts routing to it.'));
      return;
    }
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table' },
          h('caption', { class: 'visually-hidden' }, `${list.length} connection${list.length === 1 ? '' : 's'}`),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Name', 'Provider', 'Priority', 'Active', 'Status', 'Last error', 'API key'].map((t) => h('th', { scope: 'col' }, t)),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
            ),
          ),
          h('tbody', null, list.map(renderRow)),
        ),
      ),
    );
    if (focusKey) listArea.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
  }

  function renderRow(c: Connection): HTMLTableRowElement {
    const status = connectionStatus(c);
    const test = testResults.get(c.id);
    const label = c.name || c.provider;
    const modelCount = Array.isArray(c.models) ? c.models.length : 0;

    const toggleBtn = h(
      'button',
      { type: 'button', class: 'btn btn-small', 'data-focus-key': `${c.id}:toggle`, 'aria-label': `${c.isActive ? 'Disable' : 'Enable'} ${label}` },
      c.isActive ? 'Disable' : 'Enable',
    );
    const testBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-focus-key': `${c.id}:test`, 'aria-label': `Test ${label}` }, 'Test');
    const deleteBtn = h(
      'button',
      { type: 'button', class: 'btn btn-small btn-danger', 'data-focus-key': `${c.id}:delete`, 'aria-label': `Delete ${label}` },
      'Delete',
    );
    const buttons = [toggleBtn, testBtn, deleteBtn];

    toggleBtn.addEventListener('click', () =>
      void busy(buttons, async () => {
        try {
          await endpoints.updateConnection(c.id, { isActive: !c.isActive });
          rowMessage.replaceChildren();
          await load(true, `${c.id}:toggle`);
        } catch (err) {
          if (!ctx.signal.aborted) clear(rowMessage, errorBox(err));
        }
      }, { button: toggleBtn, label: c.isActive ? 'Disabling…' : 'Enabling…' }),
    );

    testBtn.addEventListener('click', () =>
      void busy(buttons, async () => {
        try {
          const result = await endpoints.testConnection(c.id);
          testResults.set(c.id, describeTest(result));
        } catch (err) {
          if (ctx.signal.aborted) return;
          const msg = err instanceof Error ? err.message : String(err);
          testResults.set(c.id, { ok: false, text: `Test failed: ${msg}` });
        }
        if (!ctx.signal.aborted) await load(true, `${c.id}:test`); // testStatus may have changed
      }, { button: testBtn, label: 'Testing…' }),
    );

    deleteBtn.addEventListener('click', async () => {
      const yes = await confirmDialog({
        title: 'Delete connection?',
        message: `Delete “${label}” (${c.provider})? Requests will no longer be routed to it. This cannot be undone.`,
        confirmLabel: 'Delete',
        danger: true,
      });
      if (!yes) {
        deleteBtn.focus();
        return;
      }
      await busy(buttons, async () => {
        try {
          await endpoints.deleteConnection(c.id);
          testResults.delete(c.id);
          clear(rowMessage, notice(`Deleted connection “${label}”.`, 'success'));
          heading.focus();
          await load(true);
        } catch (err) {
          if (!ctx.signal.aborted) clear(rowMessage, errorBox(err));
        }
      }, { button: deleteBtn, label: 'Deleting…' });
    });

    const errorType = c.lastErrorType || (c.errorCode != null && c.errorCode !== '' ? String(c.errorCode) : '');
    return h(
      'tr',
      { class: c.isActive ? null : 'row-inactive' },
      h(
        'td',
        null,
        h('div', { class: 'cell-main' }, label),
        c.prefix ? h('small', { class: 'muted' }, `prefix ${c.prefix}`) : null,
        modelCount ? h('small', { class: 'muted' }, `${c.prefix ? ' · ' : ''}${modelCount} model${modelCount === 1 ? '' : 's'}`) : null,
      ),
      h('td', null, h('code', null, c.provider)),
      h('td', { class: 'num' }, c.priority ?? '—'),
      h('td', null, c.isActive ? 'Yes' : 'No'),
      h(
        'td',
        null,
        badge(status.label, status.tone),
        status.detail ? h('small', { class: 'muted block' }, status.detail) : null,
        test ? h('small', { class: `block test-${test.ok ? 'ok' : 'bad'}`, role: 'status' }, test.text) : null,
      ),
      h(
        'td',
        null,
        errorType ? h('span', { class: 'error-type' }, errorType) : h('span', { class: 'muted' }, '—'),
        c.lastError ? h('small', { class: 'muted block truncate', title: c.lastError }, c.lastError) : null,
      ),
      h('td', null, c.apiKeyMasked ? h('code', { class: 'nowrap' }, c.apiKeyMasked) : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'actions' }, h('div', { class: 'btn-row' }, buttons)),
    );
  }

  refreshBtn.addEventListener('click', () => void load());
  void load();
  heading.focus({ preventScroll: true });
}

function sortConnections(list: Connection[]): Connection[] {
  return [...list].sort(
    (a, b) => (a.priority ?? Number.MAX_SAFE_INTEGER) - (b.priority ?? Number.MAX_SAFE_INTEGER) || (a.name || '').localeCompare(b.name || ''),
  );
}

function renderAddForm(ctx: ViewContext, onCreated: (c: Connection) => Promise<void>): HTMLElement {
  const datalist = h('datalist', { id: 'provider-options' }, PROVIDERS.map((p) => h('option', { value: p })));
  const provider = h('input', { id: 'conn-provider', name: 'provider', list: datalist.id, required: true, autocomplete: 'off', spellcheck: 'false' });
  const name = h('input', { id: 'conn-name', name: 'name', autocomplete: 'off' });
  const apiKey = h('input', { id: 'conn-apikey', name: 'apiKey', type: 'password', required: true, autocomplete: 'new-password', spellcheck: 'false' });
  const baseUrl = h('input', { id: 'conn-baseurl', name: 'baseUrl', type: 'url', placeholder: 'https://api.example.com/v1', autocomplete: 'off', spellcheck: 'false' });
  const prefix = h('input', { id: 'conn-prefix', name: 'prefix', autocomplete: 'off', spellcheck: 'false' });
  const priority = h('input', { id: 'conn-priority', name: 'priority', type: 'number', step: '1', min: '0', inputmode: 'numeric' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add connection');
  const status = h('div', { class: 'form-status' });
  const fieldset = h(
    'fieldset',
    { class: 'form-grid' },
    field('Provider', provider, 'Pick from the list or type a provider id.'),
    field('Name', name, 'Optional label, e.g. “work account”; defaults to the provider.'),
    field('API key', apiKey, 'Stored by the gateway; it is never shown again.'),
    field('Base URL', baseUrl, 'Optional; required for *-compatible providers.'),
    field('Prefix', prefix, 'Optional model prefix, e.g. “oa” for oa/gpt-4o.'),
    field('Priority', priority, 'Optional; lower numbers are tried first.'),
  );

  // Requiredness follows the provider: base URL for *-compatible, no key for local servers.
  const syncRequired = () => {
    const p = provider.value.trim().toLowerCase();
    setRequired(baseUrl, needsBaseUrl(p));
    setRequired(apiKey, !KEYLESS_PROVIDERS.has(p));
    name.placeholder = p;
  };
  provider.addEventListener('input', syncRequired);

  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'add-connection-title' },
    h('h2', { id: 'add-connection-title' }, 'Add connection'),
    datalist,
    fieldset,
    status,
    h('div', { class: 'form-actions' }, submit),
  );

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!form.reportValidity()) return;
    const body: NewConnection = {
      provider: provider.value.trim(),
      name: name.value.trim() || provider.value.trim(),
      authType: 'apikey',
    };
    if (apiKey.value) body.apiKey = apiKey.value;
    if (baseUrl.value.trim()) body.baseUrl = baseUrl.value.trim();
    if (prefix.value.trim()) body.prefix = prefix.value.trim();
    if (priority.value.trim() !== '') body.priority = Number(priority.value);

    status.replaceChildren();
    const outcome = await busy(
      [fieldset, submit],
      async (): Promise<{ created: Connection } | { failure: unknown }> => {
        try {
          const res = await endpoints.createConnection(body);
          return { created: res?.connection ?? ({ ...body, id: '', isActive: true } as Connection) };
        } catch (err) {
          return { failure: err };
        }
      },
      { button: submit, label: 'Adding…' },
    );
    if (ctx.signal.aborted) return;
    if ('created' in outcome) {
      form.reset(); // the API key leaves the page with it
      syncRequired();
      await onCreated(outcome.created);
      provider.focus();
    } else {
      clear(status, errorBox(outcome.failure));
      focusParam(outcome.failure);
    }
  });

  /** If the gateway names the offending field, move focus there. */
  function focusParam(err: unknown): void {
    const param = (err as { param?: unknown } | null)?.param;
    const map: Record<string, HTMLInputElement> = { provider, name, apiKey, baseUrl, prefix, priority };
    if (typeof param === 'string' && map[param]) map[param].focus();
    else submit.focus();
  }

  return form;
}

function setRequired(input: HTMLInputElement, required: boolean): void {
  input.required = required;
  const label = input.closest('.field')?.querySelector('label');
  if (!label) return;
  let mark = label.querySelector('.req');
  if (required && !mark) {
    mark = h('span', { class: 'req', 'aria-hidden': 'true' }, ' *');
    label.appendChild(mark);
  } else if (!required && mark) {
    mark.remove();
  }
}
