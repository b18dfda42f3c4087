// Pure logic of the Cooldown Manager: connections from
// GET /api/resilience/cooldowns with live deadlines, their status as the
// countdowns run out, the provider/status filters, which rows may be selected
// for clearing, and the sentence that reports a clear. Unit-tested in
// tests/unit/cooldowns.test.ts.

import type { ConnectionEventData, Tone } from './health';
import { expireLockouts, toLockoutRows, type LockoutItem, type LockoutRow } from './lockouts';

export type CooldownStatus = 'terminal' | 'key_rejected' | 'endpoint_not_found' | 'breaker_open' | 'leased' | 'cooling_down' | 'model_locked' | 'unavailable' | 'healthy';

/** Filter order (and the order of the status checkboxes). */
export const STATUSES: readonly CooldownStatus[] = ['breaker_open', 'cooling_down', 'leased', 'model_locked', 'unavailable', 'key_rejected', 'endpoint_not_found', 'terminal', 'healthy'];

/** Shown unless the person asks: everything out of routing, not the healthy ones. */
export const DEFAULT_STATUSES: ReadonlySet<CooldownStatus> = new Set<CooldownStatus>(['breaker_open', 'cooling_down', 'leased', 'model_locked', 'unavailable', 'key_rejected', 'endpoint_not_found', 'terminal']);

/** One connection of GET /api/resilience/cooldowns. */
export interface CooldownConnection {
  id: string;
  provider: string;
  name?: string | null;
  authType?: string | null;
  status?: CooldownStatus | string | null;
  testStatus?: string | null;
  rateLimitedUntil?: string | number | null;
  cooldownRemainingMs?: number | null;
  backoffLevel?: number | null;
  errorCode?: string | number | null;
  lastErrorType?: string | null;
  lastError?: string | null;
  lastErrorAt?: string | number | null;
  lockouts?: LockoutItem[] | null;
}

export interface ClearResult {
  ok?: boolean;
  cleared?: number;
  unchanged?: number;
  skippedTerminal?: number;
  lockoutsCleared?: number;
}

/** A connection as the page keeps it: a cooldown deadline and running lockouts. */
export interface ManagedConnection extends CooldownConnection {
  /** Epoch ms (browser clock) when the connection cooldown ends; 0 = none. */
  until: number;
  lockoutRows: LockoutRow[];
  /** The status the gateway reported, before countdowns ran out. */
  reported: string;
}

const KNOWN = new Set<string>(STATUSES);

function parseInstant(v: string | number | null | undefined): number | null {
  if (v == null || v === '') return null;
  if (typeof v === 'number') return Number.isFinite(v) ? (v < 1e12 ? v * 1000 : v) : null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/**
 * The status as the countdowns stand at `now`: terminal and unavailable stay
 * as reported; a running cooldown is cooling_down; else a running lockout is
 * model_locked; else the connection is healthy again.
 */
export function deriveStatus(c: Pick<ManagedConnection, 'reported' | 'until' | 'lockoutRows'>, now: number): CooldownStatus {
  if (c.reported === 'terminal' || c.reported === 'unavailable' || c.reported === 'key_rejected' || c.reported === 'endpoint_not_found') return c.reported;
  // The health model's word: another key's exclusive lease holds it until `until`.
  if (c.reported === 'leased' && c.until > now) return 'leased';
  // The health model's word: its provider breaker is OPEN until `until`.
  if (c.reported === 'breaker_open' && c.until > now) return 'breaker_open';
  if (c.until > now) return 'cooling_down';
  if (c.lockoutRows.some((l) => l.until > now)) return 'model_locked';
  return 'healthy';
}

/** Builds the page's rows from the API answer, received at `now`. */
export function toManagedConnections(list: readonly CooldownConnection[] | null | undefined, now: number): ManagedConnection[] {
  const out: ManagedConnection[] = [];
  for (const c of list ?? []) {
    if (!c || typeof c.id !== 'string') continue;
    const reported = typeof c.status === 'string' && KNOWN.has(c.status) ? c.status : 'healthy';
    let until = 0;
    if (typeof c.cooldownRemainingMs === 'number' && c.cooldownRemainingMs > 0) until = now + c.cooldownRemainingMs;
    else if (reported === 'cooling_down') until = parseInstant(c.rateLimitedUntil) ?? 0;
    const lockoutRows = toLockoutRows(
      (c.lockouts ?? []).map((l) => ({ ...l, provider: l.provider || c.provider, connectionId: l.connectionId || c.id, connectionName: l.connectionName ?? c.name ?? null })),
      now,
    );
    const row: ManagedConnection = { ...c, provider: String(c.provider ?? ''), reported, until, lockoutRows };
    row.status = deriveStatus(row, now);
    out.push(row);
  }
  return out.sort(
    (a, b) => STATUSES.indexOf(a.status as CooldownStatus) - STATUSES.indexOf(b.status as CooldownStatus) || (a.name || a.id).localeCompare(b.name || b.id),
  );
}

/**
 * Advances the rows to `now`: lockouts whose countdown ended go, a lapsed
 * cooldown clears, and the status follows. Returns the same array when nothing
 * changed, so the caller can skip a re-render.
 */
export function tickConnections(rows: ManagedConnection[], now: number): ManagedConnection[] {
  let changed = false;
  const next = rows.map((r) => {
    const { live, expired } = expireLockouts(r.lockoutRows, now);
    const until = r.until > now ? r.until : 0;
    const status = deriveStatus({ reported: r.reported, until, lockoutRows: live }, now);
    if (!expired.length && until === r.until && status === r.status) return r;
    changed = true;
    return { ...r, until, lockoutRows: live, status, ...(until ? {} : { cooldownRemainingMs: 0 }) };
  });
  return changed ? next : rows;
}

/** Folds a live `connection` event into its row (null when the page does not know the connection). */
export function applyConnectionEventToRow(rows: readonly ManagedConnection[], ev: ConnectionEventData, now: number): ManagedConnection[] | null {
  const i = rows.findIndex((r) => r.id === ev.id);
  if (i < 0) return null;
  const r = rows[i]!;
  const remaining = typeof ev.cooldownRemainingMs === 'number' ? ev.cooldownRemainingMs : null;
  let until = remaining != null ? (remaining > 0 ? now + remaining : 0) : (parseInstant(ev.rateLimitedUntil) ?? 0);
  let reported = ev.terminal || ev.status === 'terminal' ? 'terminal' : ev.status === 'unavailable' ? 'unavailable' : 'healthy';
  // A cooldown event says nothing about the provider breaker: an OPEN one stays.
  if ((r.reported === 'breaker_open' || r.reported === 'leased') && reported === 'healthy' && r.until > now && !(remaining && remaining > 0)) {
    reported = r.reported;
    until = r.until;
  }
  // A rejected key is a terminal state with its own name.
  if (r.reported === 'key_rejected' && reported === 'terminal') reported = 'key_rejected';
  if (r.reported === 'endpoint_not_found' && reported === 'terminal') reported = 'endpoint_not_found';
  const next: ManagedConnection = {
    ...r,
    reported,
    until,
    cooldownRemainingMs: remaining ?? Math.max(0, until - now),
    ...(ev.name ? { name: ev.name } : {}),
    ...(typeof ev.backoffLevel === 'number' ? { backoffLevel: ev.backoffLevel } : {}),
    ...(ev.lastErrorType !== undefined ? { lastErrorType: ev.lastErrorType } : {}),
    ...(ev.errorCode !== undefined ? { errorCode: ev.errorCode } : {}),
    ...(ev.terminal ? { testStatus: ev.terminal } : {}),
  };
  next.status = deriveStatus(next, now);
  return rows.map((x, j) => (j === i ? next : x));
}

export interface CooldownFilter {
  /** "" = every provider. */
  provider: string;
  statuses: ReadonlySet<string>;
}

export function filterConnections<T extends Pick<CooldownConnection, 'provider' | 'status'>>(rows: readonly T[], f: CooldownFilter): T[] {
  return rows.filter((r) => (!f.provider || r.provider === f.provider) && f.statuses.has(String(r.status)));
}

/** The providers in the list, sorted, each once. */
export function providersOf(rows: readonly Pick<CooldownConnection, 'provider'>[]): string[] {
  return [...new Set(rows.map((r) => r.provider).filter(Boolean))].sort((a, b) => a.localeCompare(b));
}

/** Terminal connections (banned, expired, credits exhausted) are never cleared from here. */
export function isSelectable(r: Pick<CooldownConnection, 'status'>): boolean {
  return r.status !== 'terminal' && r.status !== 'key_rejected' && r.status !== 'endpoint_not_found';
}

/** Keeps only selected ids that are shown and selectable (clearing never touches a hidden row). */
export function pruneSelection(selected: ReadonlySet<string>, shown: readonly Pick<CooldownConnection, 'id' | 'status'>[]): Set<string> {
  const ok = new Set(shown.filter(isSelectable).map((r) => r.id));
  return new Set([...selected].filter((id) => ok.has(id)));
}

/** "cooling_down,terminal" → those statuses; null for a missing or useless parameter. */
export function parseStatusParam(v: string | null | undefined): Set<CooldownStatus> | null {
  if (!v) return null;
  const set = new Set(v.split(',').map((s) => s.trim()).filter((s): s is CooldownStatus => KNOWN.has(s)));
  return set.size ? set : null;
}

export function statusParam(statuses: ReadonlySet<string>): string | null {
  const same = statuses.size === DEFAULT_STATUSES.size && [...statuses].every((s) => DEFAULT_STATUSES.has(s as CooldownStatus));
  return same ? null : STATUSES.filter((s) => statuses.has(s)).join(',');
}

const TERMINAL_LABELS: Record<string, string> = { banned: 'Banned', expired: 'Expired', credits_exhausted: 'Credits exhausted' };

/** The badge of a status; a terminal one names why (banned, expired, credits exhausted). */
export function statusBadge(status: string | null | undefined, testStatus?: string | null): { label: string; tone: Tone; description: string } {
  switch (status) {
    case 'breaker_open':
      return { label: 'Breaker open', tone: 'bad', description: 'Its provider circuit breaker is OPEN: out of routing until it half-opens (reset it to retry now).' };
    case 'leased':
      return { label: 'Leased', tone: 'warn', description: 'Held by another key’s exclusive lease: not serving anyone else until it is released or expires.' };
    case 'key_rejected':
      return { label: 'Key rejected', tone: 'bad', description: 'The provider rejected this key: replace it to put the connection back in service; clearing cooldowns does not.' };
    case 'endpoint_not_found':
      return { label: 'Wrong base URL', tone: 'bad', description: 'This URL answers 404: check the base URL (often a missing /v1); clearing cooldowns does not bring it back.' };
    case 'cooling_down':
      return { label: 'Cooling down', tone: 'warn', description: 'Out of routing until the cooldown ends (rate limit or transient error).' };
    case 'model_locked':
      return { label: 'Model locked', tone: 'warn', description: 'Serving, but one or more models are locked out on it.' };
    case 'unavailable':
      return { label: 'Unavailable', tone: 'warn', description: 'Not available for routing right now.' };
    case 'terminal': {
      const why = TERMINAL_LABELS[(testStatus ?? '').toLowerCase()];
      return {
        label: why ? `Terminal: ${why.toLowerCase()}` : 'Terminal',
        tone: 'bad',
        description: 'Out of service until its credentials change; clearing cooldowns does not bring it back.',
      };
    }
    case 'healthy':
      return { label: 'Healthy', tone: 'ok', description: 'Available for routing.' };
    default:
      return { label: status ? status.replace(/_/g, ' ') : 'Unknown', tone: 'muted', description: '' };
  }
}

export const STATUS_LABELS: Record<CooldownStatus, string> = {
  breaker_open: 'Breaker open',
  leased: 'Leased',
  key_rejected: 'Key rejected',
  endpoint_not_found: 'Wrong base URL',
  cooling_down: 'Cooling down',
  model_locked: 'Model locked',
  unavailable: 'Unavailable',
  terminal: 'Terminal',
  healthy: 'Healthy',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The result of a clear as one sentence:
 * "Cleared 2 cooldowns and 1 lockout; 1 terminal connection skipped."
 */
export function clearSummary(res: ClearResult | null | undefined): string {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  const cleared = n(res?.cleared);
  const locks = n(res?.lockoutsCleared);
  const skipped = n(res?.skippedTerminal);
  const unchanged = n(res?.unchanged);
  const what: string[] = [];
  if (cleared) what.push(plural(cleared, 'cooldown'));
  if (locks) what.push(plural(locks, 'lockout'));
  let text = what.length ? `Cleared ${what.join(' and ')}` : 'Nothing to clear';
  const rest: string[] = [];
  if (skipped) rest.push(`${plural(skipped, 'terminal connection')} skipped`);
  if (unchanged) rest.push(`${unchanged} already clear`);
  if (rest.length) text += `; ${rest.join(', ')}`;
  return `${text}.`;
}

// ---------------------------------------------------------------- cooldown rules (the page's small settings form)

/** The most-tuned cooldown rules, edited on the Cooldown Manager (dotted settings paths). */
export const RULE_KEYS = [
  'streamStallCooldown.enabled',
  'connectionCooldown.oauth.baseCooldownMs',
  'connectionCooldown.apikey.baseCooldownMs',
  'connectionCooldown.oauth.maxBackoffSteps',
  'connectionCooldown.apikey.maxBackoffSteps',
] as const;

export type RuleKey = (typeof RULE_KEYS)[number];

export const RULE_LABELS: Record<RuleKey, string> = {
  'streamStallCooldown.enabled': 'Cool a connection down when its stream stalls',
  'connectionCooldown.oauth.baseCooldownMs': 'OAuth base cooldown (s)',
  'connectionCooldown.apikey.baseCooldownMs': 'API key base cooldown (s)',
  'connectionCooldown.oauth.maxBackoffSteps': 'OAuth max backoff steps',
  'connectionCooldown.apikey.maxBackoffSteps': 'API key max backoff steps',
};

/** The ranges the gateway clamps these to (backend/config/resilience.go). */
export const RULE_RANGES: Partial<Record<RuleKey, { min: number; max: number; unit: string }>> = {
  'connectionCooldown.oauth.baseCooldownMs': { min: 100, max: 600_000, unit: 'ms' },
  'connectionCooldown.apikey.baseCooldownMs': { min: 100, max: 600_000, unit: 'ms' },
  'connectionCooldown.oauth.maxBackoffSteps': { min: 0, max: 15, unit: '' },
  'connectionCooldown.apikey.maxBackoffSteps': { min: 0, max: 15, unit: '' },
};

/** The range message for a parsed rule value, or null when it is inside. */
export function ruleRangeError(key: string, value: unknown): string | null {
  const r = RULE_RANGES[key as RuleKey];
  if (!r || typeof value !== 'number') return null;
  if (value >= r.min && value <= r.max) return null;
  // Millisecond settings are typed in seconds: say the range in seconds.
  if (r.unit === 'ms') return `Enter ${r.min / 1000}–${(r.max / 1000).toLocaleString('en-US')} s.`;
  return `Enter ${r.min}–${r.max.toLocaleString('en-US')}${r.unit ? ` ${r.unit}` : ''}.`;
  return null;
}
