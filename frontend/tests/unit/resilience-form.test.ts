import { describe, expect, it } from 'vitest';
import {
  allFields,
  buildSections,
  clampedFields,
  countLeaves,
  diffToPatch,
  fieldForParam,
  formatValue,
  hintFor,
  parseInput,
  validate,
  type JsonObject,
} from '../../src/lib/resilience-form';
import doc from './fixtures/resilience.json';

const settings = doc as unknown as JsonObject;
const sections = buildSections(settings);
const fields = allFields(sections);
const byKey = (k: string) => fields.find((f) => f.key === k)!;

/** Raw inputs as the form starts: every field showing its current value. */
function rawFrom(d: JsonObject, edits: Record<string, string | boolean> = {}): Map<string, string | boolean> {
  const raw = new Map<string, string | boolean>();
  for (const f of fields) {
    let v: unknown = d;
    for (const p of f.path) v = (v as Record<string, unknown>)[p];
    raw.set(f.key, f.kind === 'boolean' ? Boolean(v) : formatValue(f.kind, v as never, f.isMs));
  }
  for (const [k, v] of Object.entries(edits)) raw.set(k, v);
  return raw;
}

describe('buildSections', () => {
  it('renders every section of GET /api/resilience in document order', () => {
    expect(sections.map((s) => s.key)).toEqual([
      'requestQueue',
      'connectionCooldown',
      'providerBreaker',
      'providerCooldown',
      'comboCooldownWait',
      'quotaShareConcurrencyLimit',
      'streamStallCooldown',
      'streamRecovery',
      'modelLockout',
    ]);
    expect(sections.find((s) => s.key === 'providerBreaker')?.groups.map((g) => g.title)).toEqual(['OAuth', 'API key', 'Local']);
    expect(sections.find((s) => s.key === 'providerCooldown')?.fields.map((f) => f.key)).toEqual(['providerCooldown.enabled']);
    expect(byKey('streamRecovery.throughputWatchdog.warmupMs').kind).toBe('number');
  });
  it("describes the quota-share toggle as docs/CONCURRENCY.md does: the account gate, fail-open", () => {
    const d = sections.find((s) => s.key === 'quotaShareConcurrencyLimit')?.description ?? '';
    expect(d).toMatch(/serialise quota-share combos through the account's concurrency gate/i);
    expect(d).toMatch(/fail-open/);
    expect(d).not.toMatch(/cooldown/i);
  });
  it('knows the kind of each field and the unit of Ms fields', () => {
    expect(fields).toHaveLength(48); // 4 + 8 + 9 + 10 + 4 + 1 + 1 + 5 + 6
    expect(byKey('modelLockout.errorCodes').kind).toBe('codes');
    expect(byKey('modelLockout.enabled').kind).toBe('boolean');
    expect(byKey('requestQueue.maxWaitMs')).toMatchObject({ isMs: true, label: 'Max wait' });
    expect(hintFor(byKey('requestQueue.maxWaitMs'), '30')).toBe('seconds (= 30 s)');
    expect(hintFor(byKey('requestQueue.maxQueueDepth'), '0')).toBe('0 = unlimited');
  });
});

describe('parseInput', () => {
  it('accepts non-negative whole numbers only', () => {
    expect(parseInput('number', ' 42 ')).toEqual({ ok: true, value: 42 });
    expect(parseInput('number', '-1')).toEqual({ ok: false, error: 'Must not be negative.' });
    expect(parseInput('number', '1.5')).toEqual({ ok: false, error: 'Must be a whole number.' });
    expect(parseInput('number', '1e3').ok).toBe(false);
    expect(parseInput('number', '').ok).toBe(false);
  });
  it('parses error code lists and rejects non-error statuses', () => {
    expect(parseInput('codes', '429, 503 503;504')).toEqual({ ok: true, value: [429, 503, 504] });
    expect(parseInput('codes', '')).toEqual({ ok: true, value: [] });
    expect(parseInput('codes', '200, 429')).toEqual({ ok: false, error: '200 is not an HTTP error status (400–599).' });
    expect(parseInput('codes', '4xx').ok).toBe(false);
    expect(parseInput('boolean', true)).toEqual({ ok: true, value: true });
  });
});

describe('millisecond settings are edited in seconds', () => {
  it('shows seconds, parses seconds with up to three decimals, sends milliseconds', () => {
    expect(formatValue('number', 120_000, true)).toBe('120');
    expect(formatValue('number', 1500, true)).toBe('1.5');
    expect(parseInput('number', '1.5', true)).toEqual({ ok: true, value: 1500 });
    expect(parseInput('number', '0.001', true)).toEqual({ ok: true, value: 1 });
    expect(parseInput('number', '0.0001', true).ok).toBe(false);
    expect(parseInput('number', '-1', true)).toEqual({ ok: false, error: 'Must not be negative.' });
    expect(parseInput('number', '2 min', true).ok).toBe(false);
    expect(parseInput('number', '', true).ok).toBe(false);
  });
  it('hints the value in human units', () => {
    const f = fields.find((x) => x.key === 'requestQueue.maxWaitMs')!;
    expect(hintFor(f, '90')).toMatch(/^seconds \(= 1 min 30 s\)/);
    expect(hintFor(f, 'x')).toMatch(/^seconds/);
  });
});

describe('validate', () => {
  it('the unchanged document is valid', () => {
    expect(validate(fields, rawFrom(settings)).errors.size).toBe(0);
  });
  it('modelLockout.maxCooldownMs must be at least baseCooldownMs', () => {
    const { errors } = validate(fields, rawFrom(settings, { 'modelLockout.maxCooldownMs': '1', 'modelLockout.baseCooldownMs': '5' }));
    expect(errors.get('modelLockout.maxCooldownMs')).toBe('Must be at least the base cooldown (5 s).');
  });
  it('degradationThreshold must be below failureThreshold, except 0', () => {
    const bad = validate(fields, rawFrom(settings, { 'providerBreaker.apikey.degradationThreshold': '12' }));
    expect(bad.errors.get('providerBreaker.apikey.degradationThreshold')).toMatch(/below the failure threshold \(12\)/);
    const zero = validate(fields, rawFrom(settings, { 'providerBreaker.apikey.degradationThreshold': '0' }));
    expect(zero.errors.size).toBe(0);
  });
  it('reports per-field parse errors', () => {
    const { errors } = validate(fields, rawFrom(settings, { 'requestQueue.maxWaitMs': '-5', 'modelLockout.errorCodes': '200' }));
    expect([...errors.keys()].sort()).toEqual(['modelLockout.errorCodes', 'requestQueue.maxWaitMs']);
  });
});

describe('diffToPatch', () => {
  it('sends only the changed leaves, nested', () => {
    const { values } = validate(
      fields,
      rawFrom(settings, {
        'requestQueue.maxWaitMs': '45',
        'providerBreaker.local.failureThreshold': '3',
        'providerCooldown.enabled': true,
        'modelLockout.errorCodes': '429, 503',
      }),
    );
    const patch = diffToPatch(settings, values, fields);
    expect(patch).toEqual({
      requestQueue: { maxWaitMs: 45000 },
      providerBreaker: { local: { failureThreshold: 3 } },
      providerCooldown: { enabled: true },
      modelLockout: { errorCodes: [429, 503] },
    });
    expect(countLeaves(patch)).toBe(4);
  });
  it('an untouched form produces an empty patch', () => {
    const { values } = validate(fields, rawFrom(settings));
    expect(diffToPatch(settings, values, fields)).toEqual({});
    expect(countLeaves({})).toBe(0);
  });
});

describe('server answers', () => {
  it('finds values the server clamped', () => {
    const sent = { connectionCooldown: { apikey: { baseCooldownMs: 10 } } };
    const saved = structuredClone(settings) as JsonObject;
    ((saved['connectionCooldown'] as JsonObject)['apikey'] as JsonObject)['baseCooldownMs'] = 100;
    expect([...clampedFields(sent, saved, fields)]).toEqual([['connectionCooldown.apikey.baseCooldownMs', 100]]);
  });
  it('maps error.param to its field', () => {
    expect(fieldForParam('modelLockout.maxCooldownMs', fields)?.key).toBe('modelLockout.maxCooldownMs');
    expect(fieldForParam('modelLockout.errorCodes[1]', fields)?.key).toBe('modelLockout.errorCodes');
    expect(fieldForParam('', fields)).toBeUndefined();
    expect(fieldForParam('requestQueue.bogus', fields)).toBeUndefined();
  });
});
