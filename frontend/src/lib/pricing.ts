// The Connections page's pricing editor (issue 42 item 3): a connection's own
// prices per model (USD per million tokens) as editable rows, checked as the
// gateway checks them (PATCH /api/providers/{id} `pricing`: each price 0 …
// 10,000, a model named once), and the link the MODEL_PRICE_UNKNOWN fix
// ("set its price") opens. Unit-tested in tests/unit/pricing.test.ts.

/** One model's price as the API carries it (USD per million tokens). */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  cachedInputPerMTok?: number;
  cacheWritePerMTok?: number;
  reasoningPerMTok?: number;
}

/** One editor row: the model and its prices as typed. */
export interface PriceRow {
  model: string;
  input: string;
  output: string;
  cached: string;
}

/** The highest price the gateway takes (pricing.Price.Validate). */
export const MAX_PRICE = 10_000;

export function rowsFromPricing(p: Record<string, ModelPrice> | null | undefined): PriceRow[] {
  return Object.entries(p ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([model, v]) => ({ model, input: String(v.inputPerMTok ?? ''), output: String(v.outputPerMTok ?? ''), cached: v.cachedInputPerMTok != null ? String(v.cachedInputPerMTok) : '' }));
}

export type PriceField = 'model' | 'input' | 'output' | 'cached';

/**
 * The rows as the PATCH body's `pricing` (blank rows left out), or the first
 * row and field to fix with the sentence to show. Fields the editor does not
 * show (cache writes, reasoning) are kept from `keep`.
 */
export function pricingFromRows(
  rows: readonly PriceRow[],
  keep: Record<string, ModelPrice> = {},
): { pricing: Record<string, ModelPrice> } | { error: string; row: number; field: PriceField } {
  const out: Record<string, ModelPrice> = {};
  const num = (s: string, required: boolean): number | null | undefined => {
    const t = s.trim();
    if (t === '') return required ? null : undefined;
    if (!/^\d+(\.\d+)?$/.test(t)) return null;
    const n = Number(t);
    return n <= MAX_PRICE ? n : null;
  };
  for (const [i, r] of rows.entries()) {
    const model = r.model.trim();
    if (!model && !r.input.trim() && !r.output.trim() && !r.cached.trim()) continue;
    if (!model || model.length > 256) return { error: 'Name the model (as clients ask for it, up to 256 characters).', row: i, field: 'model' };
    if (model in out) return { error: `“${model}” is listed twice.`, row: i, field: 'model' };
    const input = num(r.input, true);
    if (input == null) return { error: `Input price: a number of dollars from 0 to ${MAX_PRICE.toLocaleString('en-US')}.`, row: i, field: 'input' };
    const output = num(r.output, true);
    if (output == null) return { error: `Output price: a number of dollars from 0 to ${MAX_PRICE.toLocaleString('en-US')}.`, row: i, field: 'output' };
    const cached = num(r.cached, false);
    if (cached === null) return { error: `Cached input price: empty, or a number from 0 to ${MAX_PRICE.toLocaleString('en-US')}.`, row: i, field: 'cached' };
    const p: ModelPrice = { ...keep[model], inputPerMTok: input, outputPerMTok: output };
    if (cached !== undefined) p.cachedInputPerMTok = cached;
    else delete p.cachedInputPerMTok;
    out[model] = p;
  }
  return { pricing: out };
}

/** A catalogue entry of GET /api/pricing. */
export interface CatalogueEntry {
  provider?: string;
  model: string;
  inputPerMTok: number;
  outputPerMTok: number;
  origin?: string;
}

/** The price the gateway would use without the connection's own: the pricing file's or the shipped one for this provider (or any provider). */
export function knownPrice(catalogue: readonly CatalogueEntry[], provider: string, model: string): CatalogueEntry | undefined {
  const of = catalogue.filter((e) => e.model === model);
  return of.find((e) => e.provider === provider && e.origin === 'file') ?? of.find((e) => !e.provider && e.origin === 'file') ?? of.find((e) => e.provider === provider) ?? of.find((e) => !e.provider);
}

/**
 * The query of the Connections page that opens the pricing editor: the
 * MODEL_PRICE_UNKNOWN fix ("set its price"). Without a connection the page
 * picks the first one serving the model.
 */
export function priceFixParams(model: string, connectionId?: string): Record<string, string> {
  return { price: connectionId || 'auto', ...(model ? { model } : {}) };
}
