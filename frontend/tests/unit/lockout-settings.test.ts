import { describe, expect, it } from 'vitest';
import {
  adjustedFields,
  backoffLadder,
  fieldForLockoutParam,
  LOCKOUT_DEFAULTS,
  lockoutPatch,
  msToSecondsText,
  parseSeconds,
  readLockout,
  toRaw,
  validateLockout,
  type LockoutRaw,
} from '../../src/lib/lockout-settings';
import doc from './fixtures/resilience.json';

const saved = readLockout(doc);
const raw = (edits: Partial<LockoutRaw> = {}): LockoutRaw => ({ ...toRaw(saved), ...edits });

describe('lockout settings form', () => {
  it('reads modelLockout with the documented defaults', () => {
    expect(saved).toEqual(LOCKOUT_DEFAULTS);
    expect(LOCKOUT_DEFAULTS).toEqual({ enabled: false, errorCodes: [403, 404, 429, 502, 503, 504], baseCooldownMs: 120000, maxCooldownMs: 1800000, maxBackoffSteps: 10, useExponentialBackoff: true });
    expect(readLockout({ modelLockout: { enabled: true, baseCooldownMs: 'x' } })).toMatchObject({ enabled: true, baseCooldownMs: 120000 });
    expect(readLockout(null)).toEqual(LOCKOUT_DEFAULTS);
  });

  it('shows seconds and sends milliseconds', () => {
    expect(toRaw(saved)).toMatchObject({ baseCooldownMs: '120', maxCooldownMs: '1800', errorCodes: '403, 404, 429, 502, 503, 504' });
    expect(msToSecondsText(1500)).toBe('1.5');
    expect(parseSeconds('1.5')).toEqual({ ok: true, ms: 1500 });
    expect(parseSeconds('1.2345').ok).toBe(false);
    expect(parseSeconds('-3').ok).toBe(false);
    expect(parseSeconds('2m').ok).toBe(false);
  });

  it('an untouched form is valid and changes nothing', () => {
    const { values, errors } = validateLockout(raw());
    expect(errors.size).toBe(0);
    expect(lockoutPatch(saved, values)).toBeNull();
  });

  it('sends only the changed fields as a partial PATCH', () => {
    const { values } = validateLockout(raw({ enabled: true, baseCooldownMs: '60' }));
    expect(lockoutPatch(saved, values)).toEqual({ modelLockout: { enabled: true, baseCooldownMs: 60000 } });
    const codes = validateLockout(raw({ errorCodes: '404,429 , 404' }));
    expect(lockoutPatch(saved, codes.values)).toEqual({ modelLockout: { errorCodes: [404, 429] } });
  });

  it('validates like the server', () => {
    const e = (edits: Partial<LockoutRaw>) => validateLockout(raw(edits)).errors;
    expect(e({ errorCodes: '404, 302' }).get('errorCodes')).toMatch(/not an HTTP error status/);
    expect(e({ errorCodes: '', enabled: true }).get('errorCodes')).toMatch(/at least one/);
    expect(e({ errorCodes: '', enabled: false }).size).toBe(0);
    expect(e({ maxCooldownMs: '60' }).get('maxCooldownMs')).toBe('Must be at least the base cooldown (120 s).');
    expect(e({ baseCooldownMs: '0.5' }).get('baseCooldownMs')).toMatch(/At least 1 s/);
    expect(e({ maxCooldownMs: '90000' }).get('maxCooldownMs')).toMatch(/At most 86400 s/);
    expect(e({ maxBackoffSteps: '21' }).get('maxBackoffSteps')).toMatch(/0 to 20/);
    expect(e({ maxBackoffSteps: '2.5' }).has('maxBackoffSteps')).toBe(true);
    expect(e({ maxBackoffSteps: '0' }).size).toBe(0);
  });

  it('maps a server error param to its field and spots clamped values', () => {
    expect(fieldForLockoutParam('modelLockout.maxCooldownMs')).toBe('maxCooldownMs');
    expect(fieldForLockoutParam('modelLockout.errorCodes[2]')).toBe('errorCodes');
    expect(fieldForLockoutParam('requestQueue.maxWaitMs')).toBeUndefined();
    expect(fieldForLockoutParam(undefined)).toBeUndefined();
    expect(adjustedFields({ maxBackoffSteps: 20, enabled: true }, { ...saved, enabled: true, maxBackoffSteps: 15 })).toEqual(['maxBackoffSteps']);
  });

  it('previews the backoff ladder', () => {
    expect(backoffLadder(saved)).toEqual([120000, 240000, 480000, 960000, 1800000]);
    expect(backoffLadder({ ...saved, useExponentialBackoff: false })).toEqual([120000]);
    expect(backoffLadder({ ...saved, maxBackoffSteps: 1 })).toEqual([120000, 240000]);
  });
});
