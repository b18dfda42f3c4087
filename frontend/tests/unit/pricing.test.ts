import { describe, expect, it } from 'vitest';
import { knownPrice, priceFixParams, pricingFromRows, rowsFromPricing } from '../../src/lib/pricing';

describe('pricing editor', () => {
  it('reads a connection’s prices as rows, sorted', () => {
    expect(rowsFromPricing({ b: { inputPerMTok: 1, outputPerMTok: 2 }, a: { inputPerMTok: 0.5, outputPerMTok: 1.5, cachedInputPerMTok: 0.1 } })).toEqual([
      { model: 'a', input: '0.5', output: '1.5', cached: '0.1' },
      { model: 'b', input: '1', output: '2', cached: '' },
    ]);
    expect(rowsFromPricing(null)).toEqual([]);
  });
  it('turns rows into the PATCH body, refusing what the gateway refuses', () => {
    const row = (model: string, input: string, output: string, cached = '') => ({ model, input, output, cached });
    expect(pricingFromRows([row('m', '2.5', '10'), row('', '', '')])).toEqual({ pricing: { m: { inputPerMTok: 2.5, outputPerMTok: 10 } } });
    expect(pricingFromRows([row('m', '1', '2', '0.25')], { m: { inputPerMTok: 9, outputPerMTok: 9, reasoningPerMTok: 3 } })).toEqual({
      pricing: { m: { inputPerMTok: 1, outputPerMTok: 2, cachedInputPerMTok: 0.25, reasoningPerMTok: 3 } },
    });
    expect(pricingFromRows([row('m', '', '2')])).toMatchObject({ row: 0, field: 'input' });
    expect(pricingFromRows([row('m', '1', '-2')])).toMatchObject({ row: 0, field: 'output' });
    expect(pricingFromRows([row('m', '1', '10001')])).toMatchObject({ row: 0, field: 'output' });
    expect(pricingFromRows([row('m', '1', '2', 'x')])).toMatchObject({ row: 0, field: 'cached' });
    expect(pricingFromRows([row('m', '1', '2'), row('m', '1', '2')])).toMatchObject({ row: 1, field: 'model', error: '“m” is listed twice.' });
    expect(pricingFromRows([row('', '1', '2')])).toMatchObject({ row: 0, field: 'model' });
    expect(pricingFromRows([])).toEqual({ pricing: {} });
  });
  it('finds the price the gateway knows and the fix link', () => {
    const cat = [
      { provider: 'openai', model: 'gpt-4o', inputPerMTok: 2.5, outputPerMTok: 10, origin: 'shipped' },
      { model: 'gpt-4o', inputPerMTok: 2, outputPerMTok: 8, origin: 'file' },
    ];
    expect(knownPrice(cat, 'openai', 'gpt-4o')?.inputPerMTok).toBe(2);
    expect(knownPrice(cat.slice(0, 1), 'openai', 'gpt-4o')?.inputPerMTok).toBe(2.5);
    expect(knownPrice(cat, 'openai', 'o3')).toBeUndefined();
    expect(priceFixParams('local-llama', 'c1')).toEqual({ price: 'c1', model: 'local-llama' });
    expect(priceFixParams('local-llama')).toEqual({ price: 'auto', model: 'local-llama' });
  });
});
