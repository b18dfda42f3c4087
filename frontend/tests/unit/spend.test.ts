import { describe, expect, it } from 'vitest';
import { niceScale } from '../../src/lib/charts';
import { compactUSD, formatUSD, meterOf, parseMoney } from '../../src/lib/spend';

describe('meterOf', () => {
  it('is null without a budget', () => {
    expect(meterOf({ budget: null, spend: { usd: 1, tokens: 1 } })).toBeNull();
    expect(meterOf({ budget: { period: 'day' }, spend: { usd: 1, tokens: 1 } })).toBeNull();
  });
  it('levels at 80 % and 100 % exactly', () => {
    const at = (usd: number) => meterOf({ budget: { usd: 0.01, period: 'day' }, spend: { usd, tokens: 0 } })!;
    expect(at(0.0079).level).toBe('ok');
    expect(at(0.008).level).toBe('warn');
    expect(at(0.0099).level).toBe('warn');
    expect(at(0.01).level).toBe('bad');
    expect(at(0.013)).toMatchObject({ level: 'bad', fraction: 1, percent: 130 });
    expect(at(0.005).text).toBe('$0.0050 of $0.0100 today');
  });
  it('shows the larger share of USD and tokens', () => {
    const m = meterOf({ budget: { usd: 10, tokens: 1000, period: 'month' }, spend: { usd: 1, tokens: 900 } })!;
    expect(m).toMatchObject({ level: 'warn', percent: 90 });
    expect(m.text).toBe('$1.00 of $10.00 · 900 of 1,000 tokens this month');
  });
});

describe('parseMoney', () => {
  const base = { usd: '', tokens: '', period: 'day', rpm: '', tpm: '' };
  it('empty fields are none', () => expect(parseMoney(base)).toEqual({ budget: null, limits: null }));
  it('reads a budget and limits', () =>
    expect(parseMoney({ ...base, usd: '0.01', tokens: '500', rpm: '60' })).toEqual({ budget: { period: 'day', usd: 0.01, tokens: 500 }, limits: { rpm: 60 } }));
  it('refuses bad numbers', () => {
    expect(parseMoney({ ...base, usd: '-1' })).toMatchObject({ field: 'usd' });
    expect(parseMoney({ ...base, tokens: '1.5' })).toMatchObject({ field: 'tokens' });
    expect(parseMoney({ ...base, rpm: '0' })).toMatchObject({ field: 'rpm' });
    expect(parseMoney({ ...base, tpm: 'x' })).toMatchObject({ field: 'tpm' });
  });
});

describe('money formats', () => {
  it('formats USD by size', () => {
    expect(formatUSD(0)).toBe('$0.00');
    expect(formatUSD(0.0123)).toBe('$0.0123');
    expect(formatUSD(12.345)).toBe('$12.35');
    expect(formatUSD(1234.5)).toBe('$1,235');
  });
  it('fits an axis', () => {
    expect([0, 0.005, 0.025, 0.5, 2.5, 120, 1200].map(compactUSD)).toEqual(['$0', '0.5¢', '2.5¢', '50¢', '$2.5', '$120', '$1.2k']);
  });
  it('scales small axes', () => {
    expect(niceScale(0.0034)).toBe(0.005);
    expect(niceScale(0.01)).toBe(0.01);
    expect(niceScale(0)).toBe(1);
    expect(niceScale(7)).toBe(10);
  });
});

import { describeEvent, parseLiveEvent } from '../../src/lib/sse';

describe('budget events', () => {
  it('are parsed and described', () => {
    const ev = parseLiveEvent('budget', JSON.stringify({ id: 3, type: 'budget', at: '2026-12-04T12:00:00Z', data: { keyId: 'k1', keyName: 'ci', percent: 100, usd: 0.0101, budget: { usd: 0.01, period: 'day' } } }));
    expect(ev).not.toBeNull();
    expect(describeEvent(ev!)).toEqual({ title: 'Key “ci” at 100 % of its day budget', detail: '$0.0101 of $0.0100; its requests are refused', tone: 'bad' });
    expect(parseLiveEvent('budget', JSON.stringify({ type: 'budget', data: { keyId: 'k1' } }))).toBeNull();
  });
});

describe('budget holds beside spent (issue 42)', () => {
  it('the meter splits spent from held and says how many requests hold it', () => {
    const m = meterOf({ budget: { usd: 0.002, period: 'day' }, spend: { usd: 0.002, tokens: 0, heldUsd: 0.0012, inFlight: 2 } })!;
    expect(m.text).toBe('$0.0008 spent + $0.0012 held of $0.0020 today');
    expect(m.held).toBe('2 requests in flight hold $0.0012');
    expect(m.level).toBe('bad');
    const idle = meterOf({ budget: { usd: 0.01, period: 'day' }, spend: { usd: 0.004, tokens: 0, heldUsd: 0, inFlight: 0 } })!;
    expect(idle.text).toBe('$0.0040 of $0.0100 today');
    expect(idle.held).toBe('');
    const toks = meterOf({ budget: { tokens: 1000, period: 'month' }, spend: { usd: 0, tokens: 900, heldTokens: 500, inFlight: 1 } })!;
    expect(toks.text).toBe('400 spent + 500 held of 1,000 tokens this month');
    expect(toks.held).toBe('1 request in flight holds 500 tokens');
  });
  it('allowUnpriced goes with a USD budget only', () => {
    const base = { usd: '', tokens: '', period: 'day', rpm: '', tpm: '' };
    expect(parseMoney({ ...base, usd: '1', allowUnpriced: true })).toEqual({ budget: { period: 'day', usd: 1, allowUnpriced: true }, limits: null });
    expect(parseMoney({ ...base, tokens: '10', allowUnpriced: true })).toEqual({ budget: { period: 'day', tokens: 10 }, limits: null });
    expect(parseMoney({ ...base, usd: '1' })).toEqual({ budget: { period: 'day', usd: 1 }, limits: null });
  });
});
