import { endpoints, isAbortError, type ApiKey, type Connection, type CreatedApiKey, type KeyMoney, type User } from '../api';
import { badge, busy, clear, confirmDialog, emptyState, errorBox, field, formatDate, h, loading, notice, openDialog } from '../dom';
import { parseList } from '../lib/format';
import { formatUSD, meterOf, parseMoney, type MoneyInput } from '../lib/spend';
import { live } from '../live';
import { showSecretOnce } from '../reveal';
import type { ViewContext } from '../router';
import { expiryCell, expiryInput, openExpiryDialog, openRotateDialog } from './key-expiry';
import { allowedOr, canSend, gateWrites } from './role-gate';

/** Scopes a client key can hold (the gateway's knownScopes). */
export const SCOPES: ReadonlyArray<[string, string]> = [
  ['inference', 'Inference: call /v1 (chat, messages, responses, models)'],
  ['lease:exclusive', 'Exclusive leases: hold one connection for a session (/api/v1/session-leases)'],
];

export function renderKeys(root: HTMLElement, ctx: ViewContext): void {
  let keys: ApiKey[] | null = null;
  let connections: Connection[] = [];
  /** Users a key can belong to (admins only see them; others get none). */
  let users: User[] = [];
  const owner = h('select', { id: 'key-owner' }, h('option', { value: '' }, 'Nobody')) as HTMLSelectElement;
  const ownerField = field('Owner', owner, 'The user this key belongs to (for their spend and budgets).');
  ownerField.hidden = true;

  const heading = h('h1', { tabindex: '-1' }, 'API Keys');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const listArea = h('div', { class: 'list-area', 'aria-live': 'polite' });
  const message = h('div', { class: 'row-message' });
  // The one place a full key is ever shown: right after it was created.
  const reveal = h('div', { class: 'reveal-area' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h('p', { class: 'muted page-intro' }, 'Keys that clients use to call the gateway’s /v1 API.'),
    reveal,
    message,
    h('section', { 'aria-labelledby': 'keys-list-title' }, h('h2', { id: 'keys-list-title', class: 'visually-hidden' }, 'Key list'), listArea),
    allowedOr('POST /api/keys', renderCreateForm, 'Creating a key'),
  );

  async function load(quiet = false): Promise<void> {
    if (!quiet || keys === null) {
      clear(listArea, loading('Loading API keys…'));
      listArea.setAttribute('aria-busy', 'true');
    }
    refreshBtn.disabled = true;
    try {
      const [list, conns, people] = await Promise.all([
        endpoints.listKeys(ctx.signal),
        endpoints.listConnections(ctx.signal).catch(() => []),
        canSend('GET /api/users') ? endpoints.listUsers(ctx.signal).catch(() => []) : Promise.resolve([]), // the owners: only an admin may list people
      ]);
      if (ctx.signal.aborted) return;
      keys = list;
      connections = conns;
      users = people;
      fillOwners();
      renderList();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      listArea.removeAttribute('aria-busy');
      refreshBtn.disabled = false;
    }
  }

  function renderList(): void {
    const list = keys ?? [];
    if (list.length === 0) {
      clear(listArea, emptyState('No API keys yet — create one below', 'Clients send a key as “Authorization: Bearer <key>”.'));
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
          h('caption', { class: 'visually-hidden' }, `${list.length} API key${list.length === 1 ? '' : 's'}`),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Name', 'Key', 'Owner', 'Scopes', 'Access', 'Spend', 'Expires', 'Created'].map((t) => h('th', { scope: 'col' }, t)),
              h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
            ),
          ),
          h('tbody', null, list.map(renderRow)),
        ),
      ),
    );
  }

  function renderRow(k: ApiKey): HTMLTableRowElement {
    const label = k.name || k.id;
    const del = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Delete key ${label}` }, 'Delete');
    del.addEventListener('click', async () => {
      const yes = await confirmDialog({
        title: 'Delete API key?',
        message: `Delete the key “${label}”? Clients using it will get 401 errors. This cannot be undone.`,
        confirmLabel: 'Delete',
        danger: true,
      });
      if (!yes) {
        del.focus();
        return;
      }
      const ok = await busy(
        [del],
        async () => {
          try {
            await endpoints.deleteKey(k.id);
            return true;
          } catch (err) {
            if (!ctx.signal.aborted) clear(message, errorBox(err));
            return false;
          }
        },
        { button: del, label: 'Deleting…' },
      );
      if (ctx.signal.aborted) return;
      if (ok) {
        clear(message, notice(`Deleted key “${label}”.`, 'success'));
        heading.focus();
        await load(true);
      } else {
        del.focus();
      }
    });
    const scopes = Array.isArray(k.scopes) && k.scopes.length ? k.scopes : null;
    const edit = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Edit access of key ${label}` }, 'Edit access');
    edit.addEventListener('click', () => openAccessDialog(k));
    const money = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Edit budget of key ${label}` }, 'Budget');
    money.addEventListener('click', () => openMoneyDialog(k));
    const privacy = h(
      'button',
      { type: 'button', class: 'btn btn-small', 'aria-pressed': String(!!k.private), 'aria-label': `Private key ${label}: its requests are never body-captured` },
      k.private ? 'Private ✓' : 'Private',
    );
    privacy.addEventListener('click', () =>
      busy([privacy], async () => {
        try {
          await endpoints.setKeyPrivate(k.id, !k.private);
          await load(true);
        } catch (err) {
          if (!ctx.signal.aborted) clear(message, errorBox(err));
        }
      }),
    );
    const expiry = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Set the expiry of key ${label}` }, 'Expiry');
    expiry.addEventListener('click', () =>
      openExpiryDialog(k, (saved) => {
        clear(message, notice(saved.expiresAt ? `“${label}” expires ${formatDate(saved.expiresAt)}.` : `“${label}” never expires.`, 'success'));
        void load(true);
      }),
    );
    const rotate = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Rotate key ${label}` }, 'Rotate');
    rotate.addEventListener('click', () => openRotateDialog(k, reveal, heading, () => void load(true)));
    // Each control is disabled, with the reason, for a role the gateway's route table does not let send it.
    gateWrites([
      [del, 'DELETE /api/keys/{id}'],
      [edit, 'PUT /api/keys/{id}'],
      [money, 'PATCH /api/keys/{id}'],
      [privacy, 'PATCH /api/keys/{id}'],
      [expiry, 'PATCH /api/keys/{id}'],
      [rotate, 'POST /api/keys/{id}/rotate'],
    ]);
    const conns = k.allowedConnections ?? [];
    const models = k.allowedModels ?? [];
    const connName = (id: string) => connections.find((c) => c.id === id)?.name || id;
    return h(
      'tr',
      { 'data-key-id': k.id },
      h(
        'td',
        null,
        h(
          'div',
          { class: 'cell-main' },
          label,
          k.isDefault ? [' ', h('span', { class: 'chip' }, 'default')] : null,
          k.private ? [' ', h('span', { class: 'chip', title: 'Its requests are never body-captured' }, 'private')] : null,
        ),
      ),
      h('td', null, k.keyMasked ? h('code', { class: 'nowrap' }, k.keyMasked) : h('span', { class: 'muted' }, '—')),
      h('td', { 'data-testid': 'key-owner' }, k.owner ? h('span', { class: 'wrap-anywhere' }, k.owner) : h('span', { class: 'muted' }, '—')),
      h('td', null, scopes ? scopes.map((s) => h('span', { class: 'chip' }, s)) : h('span', { class: 'muted' }, 'all')),
      h(
        'td',
        { 'data-testid': 'key-access' },
        conns.length ? h('div', null, 'Connections: ', conns.map((id) => h('span', { class: 'chip', title: id }, connName(id)))) : h('div', { class: 'muted' }, 'All connections'),
        models.length ? h('div', null, 'Models: ', models.map((m) => h('span', { class: 'chip' }, m))) : h('div', { class: 'muted' }, 'All models'),
      ),
      h('td', { 'data-testid': 'key-spend' }, spendCell(k)),
      h('td', null, expiryCell(k)),
      h('td', null, formatDate(k.createdAt)),
      h('td', { class: 'actions' }, h('div', { class: 'btn-row' }, edit, money, privacy, expiry, rotate, del)),
    );
  }

  /** A key's spend: a meter against its budget (warn from 80 %, refused at 100 %), else what it spent. */
  function spendCell(k: ApiKey): HTMLElement {
    const m = meterOf(k);
    const lim = k.limits;
    const limits = lim && (lim.rpm != null || lim.tpm != null)
      ? h('div', { class: 'muted small' }, [lim.rpm != null ? `${lim.rpm} req/min` : '', lim.tpm != null ? `${lim.tpm.toLocaleString('en-US')} tokens/min` : ''].filter(Boolean).join(' · '))
      : null;
    if (!m) return h('div', null, h('div', { class: 'muted' }, `${formatUSD(k.spend?.usd ?? 0)} spent`), limits);
    return h(
      'div',
      { class: 'spend-cell' },
      h(
        'div',
        {
          class: `spend-meter spend-${m.level}`,
          role: 'meter',
          'aria-label': `Spend of key ${k.name || k.id} against its budget`,
          'aria-valuemin': '0',
          'aria-valuemax': '100',
          'aria-valuenow': String(Math.min(m.percent, 100)),
          'aria-valuetext': `${m.percent} %: ${m.text}`,
          'data-testid': 'key-spend-meter',
          'data-level': m.level,
        },
        h('div', { class: 'spend-meter-fill', style: `width:${(m.fraction * 100).toFixed(1)}%` }),
      ),
      h('div', { class: 'small spend-text' }, `${m.percent} % · ${m.text}`, m.level === 'bad' ? [' ', badge('refused', 'bad')] : null),
      m.held ? h('div', { class: 'muted small', 'data-testid': 'key-spend-held' }, m.held) : null,
      limits,
    );
  }

  /** The budget and rate limits of one key. */
  function openMoneyDialog(k: ApiKey): void {
    const label = k.name || k.id;
    const fields = moneyFields('edit', k);
    const status = h('div', { class: 'form-status' });
    const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save budget');
    const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
    const form = h('form', { class: 'money-form' }, fields.el, status, h('div', { class: 'form-actions' }, save, cancel));
    const handle = openDialog({ title: `Budget of “${label}”`, content: form });
    cancel.addEventListener('click', () => handle.close());
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const money = fields.read(status);
      if (!money) return;
      save.disabled = true;
      try {
        await endpoints.updateKeyMoney(k.id, money);
        if (ctx.signal.aborted) return;
        handle.close();
        clear(message, notice(`Saved the budget of “${label}”.`, 'success'));
        await load(true);
      } catch (err) {
        if (ctx.signal.aborted) return;
        save.disabled = false;
        clear(status, errorBox(err));
      }
    });
  }

  /** Scopes, allowed connections and allowed models of one key (so leases can be set up by hand). */
  function openAccessDialog(k: ApiKey): void {
    const label = k.name || k.id;
    const scopeBoxes = SCOPES.map(([s, text]) => {
      const box = h('input', { type: 'checkbox', id: `scope-${s}`, value: s, checked: (k.scopes ?? []).includes(s) });
      return { s, box, el: h('label', { class: 'check', for: box.id }, box, ' ', h('code', null, s), ' ', h('span', { class: 'muted small' }, text)) };
    });
    const connBoxes = connections.map((c) => {
      const box = h('input', { type: 'checkbox', id: `allow-${c.id}`, value: c.id, checked: (k.allowedConnections ?? []).includes(c.id) });
      return { id: c.id, box, el: h('label', { class: 'check', for: box.id }, box, ' ', c.name || c.id, ' ', h('span', { class: 'muted small', title: c.provider }, c.prefix ? `${c.prefix}/…` : c.provider)) };
    });
    const models = h('textarea', { id: 'allow-models', rows: '3', spellcheck: 'false' });
    models.value = (k.allowedModels ?? []).join(', ');
    const status = h('div', { class: 'form-status' });
    const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save access');
    const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
    const form = h(
      'form',
      { class: 'access-form' },
      h('fieldset', { class: 'checks' }, h('legend', null, 'Scopes'), scopeBoxes.map((x) => x.el)),
      h(
        'fieldset',
        { class: 'checks' },
        h('legend', null, 'Allowed connections'),
        h('p', { class: 'muted small' }, 'None ticked: every connection. A key leasing connections should list exactly the ones it may hold.'),
        connBoxes.length ? connBoxes.map((x) => x.el) : h('p', { class: 'muted' }, 'No connection yet.'),
      ),
      field('Allowed models', models, 'Comma separated, e.g. openai/gpt-4o-mini, my-combo. Empty: every model.'),
      status,
      h('div', { class: 'form-actions' }, save, cancel),
    );
    const handle = openDialog({ title: `Access of “${label}”`, content: form });
    cancel.addEventListener('click', () => handle.close());
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const scopes = scopeBoxes.filter((x) => x.box.checked).map((x) => x.s);
      if (!scopes.length) {
        clear(status, h('p', { class: 'field-error', role: 'alert' }, 'Tick at least one scope: a key without a scope can do nothing.'));
        return;
      }
      status.replaceChildren();
      save.disabled = true;
      try {
        await endpoints.updateKeyAccess(k.id, {
          scopes,
          allowedConnections: connBoxes.filter((x) => x.box.checked).map((x) => x.id),
          allowedModels: parseList(models.value),
        });
        if (ctx.signal.aborted) return;
        handle.close();
        clear(message, notice(`Saved the access of “${label}”.`, 'success'));
        await load(true);
      } catch (err) {
        if (ctx.signal.aborted) return;
        save.disabled = false;
        clear(status, errorBox(err));
      }
    });
  }

  function showCreatedKey(created: CreatedApiKey): void {
    showSecretOnce(reveal, heading, {
      idPrefix: 'new-key',
      value: created.key,
      title: `New key “${created.name || created.id}”`,
      warning: 'Copy this key now. It is shown only once — after you leave this page it cannot be shown again.',
      label: 'New API key',
      noun: 'key',
    });
  }


  /** The owner choices: shown once there are users to choose from. */
  function fillOwners(): void {
    const chosen = owner.value;
    owner.replaceChildren(h('option', { value: '' }, 'Nobody'), ...users.map((u) => h('option', { value: u.id }, u.email)));
    owner.value = users.some((u) => u.id === chosen) ? chosen : '';
    ownerField.hidden = users.length === 0;
  }

  function renderCreateForm(): HTMLElement {
    const name = h('input', { id: 'key-name', name: 'name', required: true, autocomplete: 'off', maxlength: '100' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create key');
    const status = h('div', { class: 'form-status' });
    const money = moneyFields('new');
    const expires = expiryInput('new-key');
    const fieldset = h('fieldset', { class: 'form-grid' }, field('Name', name, 'Who or what uses this key, e.g. “laptop” or “ci”.'), expires.el, money.el, ownerField);
    const form = h(
      'form',
      { class: 'card', 'aria-labelledby': 'create-key-title' },
      h('h2', { id: 'create-key-title' }, 'Create key'),
      fieldset,
      status,
      h('div', { class: 'form-actions' }, submit),
    );
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (!form.reportValidity()) return;
      status.replaceChildren();
      const m = money.read(status);
      if (!m) return;
      const expiresAt = expires.read();
      if (expiresAt === null) return;
      const outcome = await busy(
        [fieldset, submit],
        async (): Promise<{ created: CreatedApiKey } | { failure: unknown }> => {
          try {
            return { created: await endpoints.createKey(name.value.trim(), m, owner.value || undefined, expiresAt) };
          } catch (err) {
            return { failure: err };
          }
        },
        { button: submit, label: 'Creating…' },
      );
      if (ctx.signal.aborted) return;
      if ('created' in outcome) {
        form.reset();
        message.replaceChildren();
        if (outcome.created && typeof outcome.created.key === 'string' && outcome.created.key) {
          showCreatedKey(outcome.created);
        } else {
          clear(message, notice('Key created, but the gateway did not return its value.', 'info'));
        }
        await load(true);
      } else {
        clear(status, errorBox(outcome.failure));
        name.focus();
      }
    });
    return form;
  }

  refreshBtn.addEventListener('click', () => void load());
  // A budget alert (80 %, 100 %) moves a meter: show it.
  const off = live.subscribe('budget', () => void load(true));
  ctx.signal.addEventListener('abort', off);
  void load();
}

/** The budget and rate limit fields of a key (prefix keeps the ids unique on the page). */
function moneyFields(prefix: string, k?: ApiKey): { el: HTMLElement; read: (status: HTMLElement) => KeyMoney | null } {
  const input = (id: string, value: number | undefined, attrs: Record<string, string> = {}) => {
    const el = h('input', { id: `${prefix}-${id}`, inputmode: 'decimal', autocomplete: 'off', ...attrs });
    el.value = value == null ? '' : String(value);
    return el;
  };
  const usd = input('budget-usd', k?.budget?.usd, { placeholder: 'none' });
  const tokens = input('budget-tokens', k?.budget?.tokens, { inputmode: 'numeric', placeholder: 'none' });
  const period = h(
    'select',
    { id: `${prefix}-budget-period` },
    (['day', 'month', 'total'] as const).map((p) => h('option', { value: p, selected: (k?.budget?.period ?? 'month') === p ? '' : null }, p === 'day' ? 'per day (UTC)' : p === 'month' ? 'per month (UTC)' : 'in total')),
  );
  const rpm = input('limit-rpm', k?.limits?.rpm, { inputmode: 'numeric', placeholder: 'none' });
  const tpm = input('limit-tpm', k?.limits?.tpm, { inputmode: 'numeric', placeholder: 'none' });
  const unpriced = h('input', { id: `${prefix}-budget-allow-unpriced`, type: 'checkbox', checked: k?.budget?.allowUnpriced ? '' : null });
  const controls: Record<keyof MoneyInput, HTMLInputElement | HTMLSelectElement> = { usd, tokens, period, rpm, tpm, allowUnpriced: unpriced };
  const el = h(
    'fieldset',
    { class: 'form-grid money-fields' },
    h('legend', null, 'Budget and limits'),
    field('Budget (USD)', usd, 'Requests are refused once the key has spent this much in the period. Empty: no cap.'),
    field('Budget (tokens)', tokens, 'Prompt and output tokens. Empty: no cap.'),
    field('Budget period', period),
    field(
      'Allow models of unknown price',
      unpriced,
      'With a USD budget, a model no connection has a price for is refused (its cost could not be counted) — set its price on the connection, or tick this to let it through, counting its tokens only.',
    ),
    field('Requests per minute', rpm, 'Empty: no limit.'),
    field('Tokens per minute', tpm, 'Empty: no limit.'),
  );
  const read = (status: HTMLElement): KeyMoney | null => {
    const parsed = parseMoney({ usd: usd.value, tokens: tokens.value, period: period.value, rpm: rpm.value, tpm: tpm.value, allowUnpriced: unpriced.checked });
    if ('error' in parsed) {
      clear(status, h('p', { class: 'field-error', role: 'alert' }, parsed.error));
      controls[parsed.field].focus();
      return null;
    }
    status.replaceChildren();
    return parsed;
  };
  return { el, read };
}
