// Pure logic of the Lockout Settings form (`modelLockout` of
// GET/PATCH /api/resilience): durations shown in seconds and sent in
// milliseconds, client-side validation with the server's rules, the partial
// PATCH of changed fields, and mapping a server error's `param` to its field.
// Status lists parse like the Resilience Settings form (lib/resilience-form).
// Unit-tested in tests/unit/lockout-settings.test.ts.

import { parseInput, type JsonObject } from './resilience-form';

export interface ModelLockoutSettings {
  enabled: boolean;
  errorCodes: number[];
  baseCooldownMs: number;
  maxCooldownMs: number;
  maxBackoffSteps: number;
  useExponentialBackoff: boolean;
}

export type LockoutField = keyof ModelLockoutSettings;

export const LOCKOUT_FIELDS: readonly LockoutField[] = ['enabled', 'errorCodes', 'baseCooldownMs', 'maxCooldownMs', 'maxBackoffSteps', 'useExponentialBackoff'];

/** The gateway's defaults (guide §3). */
export const LOCKOUT_DEFAULTS: Readonly<ModelLockoutSettings> = Object.freeze({
  enabled: false,
  errorCodes: [403, 404, 429, 502, 503, 504],
  baseCooldownMs: 120_000,
  maxCooldownMs: 1_800_000,
  maxBackoffSteps: 10,
  useExponentialBackoff: true,
});

/** The server clamps cooldowns to 1 s … 1 day and backoff steps to 0 … 20. */
export const LIMITS = { minCooldownMs: 1000, maxCooldownMs: 86_400_000, maxBackoffSteps: 20 } as const;

/** What the inputs hold: text for numbers (seconds) and lists, booleans for checkboxes. */
export interface LockoutRaw {
  enabled: boolean;
  errorCodes: string;
  baseCooldownMs: string;
  maxCooldownMs: string;
  maxBackoffSteps: string;
  useExponentialBackoff: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `modelLockout` of a settings document, with defaults for anything missing or malformed. */
export function readLockout(doc: unknown): ModelLockoutSettings {
  const m = isObject(doc) && isObject(doc['modelLockout']) ? doc['modelLockout'] : {};
  const num = (k: LockoutField) => (typeof m[k] === 'number' && Number.isFinite(m[k]) ? (m[k] as number) : (LOCKOUT_DEFAULTS[k] as number));
  const bool = (k: LockoutField) => (typeof m[k] === 'boolean' ? (m[k] as boolean) : (LOCKOUT_DEFAULTS[k] as boolean));
  const codes = Array.isArray(m['errorCodes']) && m['errorCodes'].every((c) => typeof c === 'number') ? [...(m['errorCodes'] as number[])] : [...LOCKOUT_DEFAULTS.errorCodes];
  return {
    enabled: bool('enabled'),
    errorCodes: codes,
    baseCooldownMs: num('baseCooldownMs'),
    maxCooldownMs: num('maxCooldownMs'),
    maxBackoffSteps: num('maxBackoffSteps'),
    useExponentialBackoff: bool('useExponentialBackoff'),
  };
}

/** 120000 → "120", 1500 → "1.5", 1234 → "1.234". */
export function msToSecondsText(ms: number): string {
  return String(Math.round(ms) / 1000);
}

/** "120" → 120000 ms; at most millisecond precision, never negative. */
export function parseSeconds(text: string): { ok: true; ms: number } | { ok: false; error: string } {
  const t = text.trim();
  if (t === '') return { ok: false, error: 'Enter a number of seconds.' };
  if (/^-/.test(t)) return { ok: false, error: 'Must not be negative.' };
  if (!/^\d+(\.\d+)?$/.test(t)) return { ok: false, error: 'Enter seconds as a number, e.g. 120 or 1.5.' };
  if (/\.\d{4,}$/.test(t)) return { ok: false, error: 'At most 3 decimals (milliseconds).' };
  const ms = Math.round(Number(t) * 1000);
  if (!Number.isSafeInteger(ms)) return { ok: false, error: 'Too large.' };
  return { ok: true, ms };
}

export function toRaw(s: ModelLockoutSettings): LockoutRaw {
  return {
    enabled: s.enabled,
    errorCodes: s.errorCodes.join(', '),
    baseCooldownMs: msToSecondsText(s.baseCooldownMs),
    maxCooldownMs: msToSecondsText(s.maxCooldownMs),
    maxBackoffSteps: String(s.maxBackoffSteps),
    useExponentialBackoff: s.useExponentialBackoff,
  };
}

export interface LockoutValidation {
  /** Parsed values of the fields that are valid. */
  values: Partial<ModelLockoutSettings>;
  /** Field → message; empty when the form can be saved. */
  errors: Map<LockoutField, string>;
}

const inSeconds = (ms: number) => `${msToSecondsText(ms)} s`;

/** Validates the form with the rules the server enforces (and its clamp ranges, shown rather than applied silently). */
export function validateLockout(raw: LockoutRaw): LockoutValidation {
  const values: Partial<ModelLockoutSettings> = { enabled: Boolean(raw.enabled), useExponentialBackoff: Boolean(raw.useExponentialBackoff) };
  const errors = new Map<LockoutField, string>();

  const codes = parseInput('codes', raw.errorCodes);
  if (!codes.ok) errors.set('errorCodes', codes.error);
  else if (Array.isArray(codes.value) && codes.value.length === 0 && raw.enabled) errors.set('errorCodes', 'List at least one HTTP status, or turn lockout off.');
  else values.errorCodes = codes.value as number[];

  for (const k of ['baseCooldownMs', 'maxCooldownMs'] as const) {
    const p = parseSeconds(raw[k]);
    if (!p.ok) errors.set(k, p.error);
    else if (p.ms < LIMITS.minCooldownMs) errors.set(k, `At least ${inSeconds(LIMITS.minCooldownMs)}.`);
    else if (p.ms > LIMITS.maxCooldownMs) errors.set(k, `At most ${inSeconds(LIMITS.maxCooldownMs)} (1 day).`);
    else values[k] = p.ms;
  }
  if (values.baseCooldownMs !== undefined && values.maxCooldownMs !== undefined && values.maxCooldownMs < values.baseCooldownMs) {
    errors.set('maxCooldownMs', `Must be at least the base cooldown (${inSeconds(values.baseCooldownMs)}).`);
    delete values.maxCooldownMs;
  }

  const steps = raw.maxBackoffSteps.trim();
  if (steps === '') errors.set('maxBackoffSteps', 'Enter a number from 0 to 20.');
  else if (!/^\d+$/.test(steps) || Number(steps) > LIMITS.maxBackoffSteps) errors.set('maxBackoffSteps', 'Enter a whole number from 0 to 20.');
  else values.maxBackoffSteps = Number(steps);

  return { values, errors };
}

/** The fields whose value differs from the saved settings. */
export function lockoutChanges(original: ModelLockoutSettings, values: Partial<ModelLockoutSettings>): Partial<ModelLockoutSettings> {
  const out: Partial<ModelLockoutSettings> = {};
  for (const k of LOCKOUT_FIELDS) {
    const v = values[k];
    if (v === undefined) continue;
    if (JSON.stringify(v) !== JSON.stringify(original[k])) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** The PATCH /api/resilience body: `{"modelLockout":{…changed…}}`, or null when nothing changed. */
export function lockoutPatch(original: ModelLockoutSettings, values: Partial<ModelLockoutSettings>): JsonObject | null {
  const changed = lockoutChanges(original, values);
  return Object.keys(changed).length ? ({ modelLockout: changed } as unknown as JsonObject) : null;
}

/** "modelLockout.maxCooldownMs" (a server error's param) → "maxCooldownMs"; anything else → undefined. */
export function fieldForLockoutParam(param: string | undefined | null): LockoutField | undefined {
  if (!param) return undefined;
  const m = /^modelLockout\.([A-Za-z]+)/.exec(param);
  const k = m?.[1];
  return k && (LOCKOUT_FIELDS as readonly string[]).includes(k) ? (k as LockoutField) : undefined;
}

/** Fields the server saved with another value than sent (it clamps out-of-range numbers). */
export function adjustedFields(sent: Partial<ModelLockoutSettings>, saved: ModelLockoutSettings): LockoutField[] {
  return LOCKOUT_FIELDS.filter((k) => sent[k] !== undefined && JSON.stringify(sent[k]) !== JSON.stringify(saved[k]));
}

/**
 * The lock durations a model goes through as it keeps failing: the base
 * cooldown, doubled per repeat up to the maximum (or the step limit), e.g.
 * [120000, 240000, …, 1800000]. Without exponential backoff it is just the base.
 */
export function backoffLadder(s: Pick<ModelLockoutSettings, 'baseCooldownMs' | 'maxCooldownMs' | 'maxBackoffSteps' | 'useExponentialBackoff'>): number[] {
  const base = Math.max(0, s.baseCooldownMs);
  if (!s.useExponentialBackoff || s.maxBackoffSteps <= 0) return [base];
  const out: number[] = [];
  for (let k = 0; k <= s.maxBackoffSteps; k++) {
    const d = Math.min(base * 2 ** k, s.maxCooldownMs);
    if (out.length && d === out[out.length - 1]) break;
    out.push(d);
  }
  return out;
}
