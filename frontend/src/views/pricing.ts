// The Connections page's pricing editor (issue 42 item 3): a connection's own
// price per model (input / output / cached input, USD per million tokens),
// saved with PATCH /api/providers/{id} `pricing`. The MODEL_PRICE_UNKNOWN
// fix ("set its price": `#/connections?price=<id>|auto&model=<model>`) opens
// it with the model's row ready.

import { ApiError, endpoints, type Connection } from '../api';
import { clear, errorBox, h, openDialog, setFieldError } from '../dom';
import { href } from '../router';
import { FIX_ROUTES } from '../lib/fixes';
import { canSend, whyNot } from './role-gate';
import { knownPrice, priceFixParams, pricingFromRows, rowsFromPricing, type CatalogueEntry, type ModelPrice, type PriceField, type PriceRow } from '../lib/pricing';

/** The models a connection serves (bare names). */
function servedOf(c: Connection): string[] {
  const list = (c.servedModels ?? c.models ?? []) as unknown[];
  return list.map((m) => (typeof m === 'string' ? m : String((m as { id?: unknown })?.id ?? ''))).filter(Boolean);
}

/** The connection's own prices as the API shows them. */
function ownPricing(c: Connection): Record<string, ModelPrice> {
  const p = c['pricing'];
  return p && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, ModelPrice>) : {};
}

/** Whether this session may set a price (the set_price fix's routes by the gateway's route table). */
export function canSetPrice(): boolean {
  return canSend(FIX_ROUTES['set_price']!);
}

/** The MODEL_PRICE_UNKNOWN fix: a link that opens this editor with the model's row (on Logs rows and Playground answers; shown only when canSetPrice). */
export function priceFixLink(model: string, connectionId?: string): HTMLElement {
  return h('a', { class: 'btn btn-small', href: href('/connections', priceFixParams(model, connectionId)), 'data-fix': 'set_price', 'aria-label': `Set the price of ${model || 'the model'}` }, 'Set its price');
}

/** The row button that opens the editor. */
export function pricesButton(c: Connection, onSaved: (count: number, c: Connection) => void): HTMLButtonElement {
  const label = c.name || c.provider;
  const n = Object.keys(ownPricing(c)).length;
  const btn = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'prices-button', 'aria-label': `Prices of ${label}` }, n ? `Prices (${n})` : 'Prices');
  btn.addEventListener('click', () => openPricingDialog(c, { onSaved }));
  return btn;
}

/**
 * `#/connections?price=<id>&model=<m>` (or `price=auto`: the first connection
 * serving the model, else the first one) opens the editor; false when there
 * is no connection to open.
 */
export function openPricingFromParams(params: URLSearchParams, connections: readonly Connection[], onSaved: (count: number, c: Connection) => void): boolean {
  const want = params.get('price');
  if (!want) return false;
  const model = params.get('model') ?? '';
  const c = connections.find((x) => x.id === want) ?? connections.find((x) => model && servedOf(x).includes(model)) ?? connections[0];
  if (!c) return false;
  openPricingDialog(c, { model, onSaved });
  return true;
}

export function openPricingDialog(c: Connection, opts: { model?: string; onSaved: (count: number, c: Connection) => void }): void {
  // Saving sends PATCH /api/providers/{id}: the gateway's route table says who may.
  const denied = whyNot(FIX_ROUTES['set_price']!);
  const canEdit = !denied;
  const label = c.name || c.provider;
  const own = ownPricing(c);
  const rows: PriceRow[] = rowsFromPricing(own);
  if (opts.model && !rows.some((r) => r.model === opts.model)) rows.push({ model: opts.model, input: '', output: '', cached: '' });
  if (!rows.length) rows.push({ model: servedOf(c)[0] ?? '', input: '', output: '', cached: '' });
  let catalogue: CatalogueEntry[] = [];

  const listId = `price-models-${c.id}`;
  const datalist = h('datalist', { id: listId }, servedOf(c).map((m) => h('option', { value: m })));
  const tbody = h('tbody');
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const addBtn = h('button', { type: 'button', class: 'btn btn-small', disabled: !canEdit }, 'Add a model');
  const save = h('button', { type: 'submit', class: 'btn btn-primary', disabled: !canEdit }, 'Save prices');
  const cancel = h('button', { type: 'button', class: 'btn' }, canEdit ? 'Cancel' : 'Close');
  const cells: Array<Record<PriceField, HTMLInputElement> & { slot: HTMLElement; known: HTMLElement }> = [];

  function renderRows(): void {
    cells.length = 0;
    clear(
      tbody,
      rows.map((r, i) => {
        const input = (f: PriceField, attrs: Record<string, string>) => {
          const el = h('input', { id: `price-${i}-${f}`, 'data-field': f, autocomplete: 'off', spellcheck: 'false', disabled: !canEdit, 'aria-describedby': `price-${i}-error`, ...attrs }) as HTMLInputElement;
          el.value = r[f];
          el.addEventListener('input', () => {
            r[f] = el.value;
            if (f === 'model') showKnown(i);
          });
          return el;
        };
        const model = input('model', { list: listId, 'aria-label': `Model of row ${i + 1}`, placeholder: 'model name' });
        const inp = input('input', { inputmode: 'decimal', 'aria-label': `Input price of ${r.model || `row ${i + 1}`}, dollars per million tokens`, placeholder: '0.00' });
        const out = input('output', { inputmode: 'decimal', 'aria-label': `Output price of ${r.model || `row ${i + 1}`}, dollars per million tokens`, placeholder: '0.00' });
        const cached = input('cached', { inputmode: 'decimal', 'aria-label': `Cached input price of ${r.model || `row ${i + 1}`}, dollars per million tokens`, placeholder: 'as input' });
        const slot = h('small', { id: `price-${i}-error`, class: 'field-error' });
        const known = h('small', { class: 'muted' });
        cells.push({ model, input: inp, output: out, cached, slot, known });
        const remove = h('button', { type: 'button', class: 'btn btn-small btn-ghost', disabled: !canEdit, 'aria-label': `Remove the price of ${r.model || `row ${i + 1}`}` }, 'Remove');
        remove.addEventListener('click', () => {
          rows.splice(i, 1);
          renderRows();
          save.focus();
        });
        return h(
          'tr',
          { 'data-model': r.model },
          h('td', null, model, slot),
          h('td', null, inp),
          h('td', null, out),
          h('td', null, cached),
          h('td', null, known),
          h('td', null, remove),
        );
      }),
    );
    rows.forEach((_, i) => showKnown(i));
  }

  /** What the gateway would charge for the row's model without this connection's own price. */
  function showKnown(i: number): void {
    const k = knownPrice(catalogue, c.provider, rows[i]!.model.trim());
    cells[i]!.known.textContent = k ? `$${k.inputPerMTok} / $${k.outputPerMTok}${k.origin === 'file' ? ' (your pricing file)' : ''}` : 'none: unknown price';
  }

  addBtn.addEventListener('click', () => {
    rows.push({ model: '', input: '', output: '', cached: '' });
    renderRows();
    cells.at(-1)?.model.focus();
  });

  const flat = c['flatRate'] === true;
  const form = h(
    'form',
    { class: 'pricing-form', novalidate: true, 'data-testid': 'pricing-form' },
    h(
      'p',
      { class: 'muted' },
      `Prices of “${label}” in US dollars per million tokens. They win over your pricing file and the shipped prices. Under a key's dollar budget, a model with no known price is refused (MODEL_PRICE_UNKNOWN) until it has one.`,
    ),
    flat ? h('p', { class: 'alert alert-info' }, 'This connection is flat-rate (a subscription or a local model): its answers cost $0, and these prices only say what they would have cost.') : null,
    canEdit ? null : h('p', { class: 'alert alert-info', 'data-testid': 'role-denied' }, `Changing prices: ${denied}`),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'table table-compact' },
        h('caption', { class: 'visually-hidden' }, `Prices of ${label}`),
        h('thead', null, h('tr', null, ['Model', 'Input $/1M', 'Output $/1M', 'Cached input $/1M', 'Known price', ''].map((t) => h('th', { scope: 'col' }, t)))),
        tbody,
      ),
    ),
    datalist,
    h('div', { class: 'btn-row' }, addBtn),
    status,
    h('div', { class: 'form-actions' }, save, cancel),
  );
  renderRows();
  const focusRow = opts.model ? rows.findIndex((r) => r.model === opts.model) : -1;
  const handle = openDialog({ title: `Prices of “${label}”`, content: form, wide: true, initialFocus: (focusRow >= 0 ? cells[focusRow]?.input : cells[0]?.model) ?? cancel });
  cancel.addEventListener('click', () => handle.close());

  void endpoints
    .listPricing()
    .then((p) => {
      catalogue = Array.isArray(p?.catalogue) ? p.catalogue : [];
      rows.forEach((_, i) => showKnown(i));
    })
    .catch(() => {
      /* the known prices stay unknown; editing works without them */
    });

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const x of cells) for (const f of ['model', 'input', 'output', 'cached'] as const) setFieldError(x[f], x.slot, null);
    status.replaceChildren();
    const r = pricingFromRows(rows, own);
    if ('error' in r) {
      const x = cells[r.row]!;
      setFieldError(x[r.field], x.slot, r.error);
      x[r.field].focus();
      return;
    }
    save.disabled = true;
    try {
      await endpoints.setConnectionPricing(c.id, r.pricing);
      handle.close();
      opts.onSaved(Object.keys(r.pricing).length, c);
    } catch (err) {
      save.disabled = false;
      clear(status, errorBox(err));
      if (err instanceof ApiError && err.param === 'pricing') {
        const m = /pricing\["([^"]*)"\]/.exec(err.message);
        const i = m ? rows.findIndex((x) => x.model.trim() === m[1]) : -1;
        if (i >= 0) setFieldError(cells[i]!.input, cells[i]!.slot, err.message);
      }
    }
  });
}
