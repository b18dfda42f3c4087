// Pure logic of the Resilience Settings form: the fields are generated from the
// GET /api/resilience document itself (so a new server setting shows up without
// a frontend change), validated client-side with the server's own rules, and the
// edits are sent as a partial PATCH of only the changed leaves.

import { formatDuration, humanizeKey } from './format';

export type FieldKind = 'number' | 'boolean' | 'codes' | 'text';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface FieldSpec {
  /** Dotted path, as the server names it in `error.param`: "modelLockout.maxCooldownMs". */
  key: string;
  path: string[];
  kind: FieldKind;
  label: string;
  /** Static hint; millisecond fields compute theirs from the value with msHint. */
  hint: string;
  isMs: boolean;
}

export interface SectionSpec {
  /** Dotted path of the group: "connectionCooldown.oauth". */
  key: string;
  path: string[];
  title: string;
  description: string;
  fields: FieldSpec[];
  groups: SectionSpec[];
}

const SECTION_TEXT: Record<string, { title?: string; description: string }> = {
  requestQueue: { description: 'Per-connection admission queue: how long a request may wait for a free slot and to run.' },
  connectionCooldown: { description: 'How long a connection rests after a rate limit or transient error, per auth type.' },
  providerBreaker: { description: 'Circuit breaker per provider: failures before it degrades and opens, and how long it stays open.' },
  providerCooldown: { description: 'Optional window gate: too many failures within a window cools the whole provider.' },
  comboCooldownWait: { title: 'Combo cooldown wait', description: 'Combos may wait out a short cooldown instead of failing over.' },
  quotaShareConcurrencyLimit: {
    title: 'Quota-share concurrency limit',
    description:
      "Serialise quota-share combos through the account's concurrency gate (its max concurrent), fail-open: a request that waited its whole budget goes ahead without a slot. Off: counted on the account, not serialised.",
  },
  streamStallCooldown: { description: 'Cool a connection when its stream stalls (off: a stall only fails that request).' },
  streamRecovery: { description: 'Stream recovery guards.' },
  throughputWatchdog: { description: 'Abort streams that stay below a minimum throughput after warm-up.' },
  modelLockout: { description: 'Lock one model on one connection out after the listed HTTP errors, with backoff.' },
  failover: {
    description:
      'How a request is rescued: in-place retry of short 429s / 5xx / resets, the repeated-failure streak that cools a connection, quota cooldowns without a reset, and finishing a broken stream on a target that takes a prefill.',
  },
  oauth: { title: 'OAuth', description: '' },
  apikey: { title: 'API key', description: '' },
  local: { title: 'Local', description: '' },
};

const FIELD_HINTS: Record<string, string> = {
  maxQueueDepth: '0 = unlimited',
  degradationThreshold: 'must be below the failure threshold; 0 derives it',
  maxBackoffMultiplier: 'OPEN hold doubles per failed probe up to this many holds (1–64; 1 = flat); also scales the DEGRADED quiet window',
  errorCodes: 'HTTP statuses 400–599, comma separated',
  maxBackoffSteps: 'rungs on the exponential ladder',
  minBytesPerSecond: 'bytes per second',
  minMeasurableBytes: 'bytes',
  retryMaxHintMs: 'longest Retry-After waited out in place (0 = off, at most 60000)',
  retriesPerTarget: 'in-place retries for a plain model',
  failureStreak: 'consecutive 5xx / transport failures that cool a connection (0 = off)',
};

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function kindOf(v: Json): FieldKind | null {
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return 'number';
  if (Array.isArray(v) && v.every((x) => typeof x === 'number')) return 'codes';
  if (typeof v === 'string') return 'text';
  return null;
}

/** Builds the form layout from a settings document, in document order. */
export function buildSections(doc: JsonObject, path: string[] = []): SectionSpec[] {
  const out: SectionSpec[] = [];
  for (const [name, value] of Object.entries(doc)) {
    if (!isObject(value)) continue;
    out.push(buildSection(name, value, [...path, name]));
  }
  return out;
}

function buildSection(name: string, obj: JsonObject, path: string[]): SectionSpec {
  const text = SECTION_TEXT[name];
  const fields: FieldSpec[] = [];
  const groups: SectionSpec[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (isObject(v)) {
      groups.push(buildSection(k, v, [...path, k]));
      continue;
    }
    const kind = kindOf(v);
    if (!kind) continue;
    const isMs = kind === 'number' && /Ms$/.test(k);
    fields.push({
      key: [...path, k].join('.'),
      path: [...path, k],
      kind,
      label: k === 'enabled' ? 'Enabled' : humanizeKey(k),
      hint: FIELD_HINTS[k] ?? '',
      isMs,
    });
  }
  return { key: path.join('.'), path, title: text?.title ?? humanizeKey(name), description: text?.description ?? '', fields, groups };
}

/** Every field of the layout, depth first. */
export function allFields(sections: SectionSpec[]): FieldSpec[] {
  return sections.flatMap((s) => [...s.fields, ...allFields(s.groups)]);
}

export function getAt(obj: Json | undefined, path: readonly string[]): Json | undefined {
  let cur: Json | undefined = obj;
  for (const p of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

export function setAt(obj: JsonObject, path: readonly string[], value: Json): void {
  let cur: JsonObject = obj;
  path.forEach((p, i) => {
    if (i === path.length - 1) {
      cur[p] = value;
      return;
    }
    const next = cur[p];
    if (!isObject(next)) cur[p] = {};
    cur = cur[p] as JsonObject;
  });
}

/** The text an input shows for a value; millisecond settings are edited in seconds. */
export function formatValue(kind: FieldKind, v: Json | undefined, isMs = false): string {
  if (v == null) return '';
  if (kind === 'codes' && Array.isArray(v)) return v.join(', ');
  if (isMs && typeof v === 'number') return String(Math.round(v) / 1000);
  return String(v);
}

export type Parsed = { ok: true; value: Json } | { ok: false; error: string };

/**
 * Parses one input's raw text (booleans come from checkboxes and are passed as
 * is). A millisecond setting (isMs) is typed in seconds, e.g. "1.5", and sent in ms.
 */
export function parseInput(kind: FieldKind, raw: string | boolean, isMs = false): Parsed {
  if (kind === 'boolean') return { ok: true, value: Boolean(raw) };
  const text = String(raw).trim();
  if (kind === 'text') return { ok: true, value: text };
  if (kind === 'number' && isMs) {
    if (text === '') return { ok: false, error: 'Enter a number of seconds.' };
    if (!/^-?\d+(\.\d+)?$/.test(text)) return { ok: false, error: 'Enter seconds, e.g. 30 or 1.5.' };
    const n = Number(text);
    if (n < 0) return { ok: false, error: 'Must not be negative.' };
    if (!/^-?\d+(\.\d{1,3})?$/.test(text)) return { ok: false, error: 'At most three decimals (milliseconds).' };
    const ms = Math.round(n * 1000);
    if (!Number.isSafeInteger(ms)) return { ok: false, error: 'Too large.' };
    return { ok: true, value: ms };
  }
  if (kind === 'number') {
    if (text === '') return { ok: false, error: 'Enter a number.' };
    if (!/^-?\d+(\.\d+)?$/.test(text)) return { ok: false, error: 'Enter a whole number, digits only.' };
    const n = Number(text);
    if (n < 0) return { ok: false, error: 'Must not be negative.' };
    if (!Number.isInteger(n)) return { ok: false, error: 'Must be a whole number.' };
    if (!Number.isSafeInteger(n)) return { ok: false, error: 'Too large.' };
    return { ok: true, value: n };
  }
  // codes
  if (text === '') return { ok: true, value: [] };
  const parts = text.split(/[\s,;]+/).filter(Boolean);
  const codes: number[] = [];
  for (const p of parts) {
    if (!/^\d+$/.test(p)) return { ok: false, error: `“${p}” is not an HTTP status code.` };
    const n = Number(p);
    if (n < 400 || n > 599) return { ok: false, error: `${n} is not an HTTP error status (400–599).` };
    if (!codes.includes(n)) codes.push(n);
  }
  return { ok: true, value: codes };
}

/**
 * Validates the whole form: each input parses, plus the cross-field rules the
 * server enforces (maxCooldownMs ≥ baseCooldownMs; degradationThreshold below
 * failureThreshold unless 0). Returns field key → message; empty when valid.
 * `values` holds the parsed values of valid inputs, `raw` every input's text.
 */
export function validate(fields: FieldSpec[], raw: ReadonlyMap<string, string | boolean>): { values: JsonObject; errors: Map<string, string> } {
  const values: JsonObject = {};
  const errors = new Map<string, string>();
  for (const f of fields) {
    const r = raw.get(f.key);
    if (r === undefined) continue;
    const parsed = parseInput(f.kind, r, f.isMs);
    if (parsed.ok) setAt(values, f.path, parsed.value);
    else errors.set(f.key, parsed.error);
  }
  const num = (key: string): number | undefined => {
    const v = getAt(values, key.split('.'));
    return typeof v === 'number' && !errors.has(key) ? v : undefined;
  };
  for (const f of fields) {
    const last = f.path[f.path.length - 1];
    const parent = f.path.slice(0, -1).join('.');
    if (last === 'maxCooldownMs') {
      const max = num(f.key);
      const base = num(`${parent}.baseCooldownMs`);
      if (max !== undefined && base !== undefined && max < base) {
        errors.set(f.key, `Must be at least the base cooldown (${formatDuration(base)}).`);
      }
    }
    if (last === 'degradationThreshold') {
      const deg = num(f.key);
      const fail = num(`${parent}.failureThreshold`);
      if (deg !== undefined && fail !== undefined && deg !== 0 && deg >= fail) {
        errors.set(f.key, `Must be below the failure threshold (${fail}), or 0 to derive it.`);
      }
    }
  }
  return { values, errors };
}

function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The partial PATCH body: only leaves whose value differs from the original document. */
export function diffToPatch(original: JsonObject, values: JsonObject, fields: FieldSpec[]): JsonObject {
  const patch: JsonObject = {};
  for (const f of fields) {
    const next = getAt(values, f.path);
    if (next === undefined) continue;
    if (!sameJson(getAt(original, f.path), next)) setAt(patch, f.path, next);
  }
  return patch;
}

/** Number of changed leaves in a patch. */
export function countLeaves(patch: Json): number {
  if (!isObject(patch)) return 1;
  return Object.values(patch).reduce<number>((n, v) => n + countLeaves(v), 0);
}

/** Field keys whose saved value differs from what was sent (the server clamps out-of-range numbers). */
export function clampedFields(sent: JsonObject, saved: JsonObject, fields: FieldSpec[]): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const f of fields) {
    const s = getAt(sent, f.path);
    if (s === undefined) continue;
    const v = getAt(saved, f.path);
    if (v !== undefined && !sameJson(s, v)) out.set(f.key, v);
  }
  return out;
}

/**
 * Which field a server error belongs to: `param` is the dotted path; an unknown
 * or missing param (e.g. "unknown field" errors) goes to the form as a whole.
 */
export function fieldForParam(param: string | undefined, fields: FieldSpec[]): FieldSpec | undefined {
  if (!param) return undefined;
  return fields.find((f) => f.key === param) ?? fields.find((f) => param.startsWith(`${f.key}.`) || param.startsWith(`${f.key}[`));
}

/** A seconds field's hint: "seconds (= 2 min)"; other fields keep their static hint. */
export function hintFor(f: FieldSpec, raw: string | boolean | undefined): string {
  if (!f.isMs) return f.hint;
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw.trim()) : NaN;
  const base = Number.isFinite(n) && n >= 0 ? `seconds (= ${formatDuration(Math.round(n * 1000))})` : 'seconds';
  return f.hint ? `${base}; ${f.hint}` : base;
}
