// Pure logic of the Cooldown Manager: connections from
// GET /api/resilience/cooldowns with live deadlines, their status as the
// countdowns run out, the provider/status filters, which rows may be selected
// for clearing, and the sentence that reports a clear. Unit-tested in
// tests/unit/cooldowns.test.ts.

import type { ConnectionEventData, Tone } from './health';
import { CONNECTION_STATES, instant, stateInfo, stateRank, toHealthState, type ConnHealth, type HealthState } from './healthmodel';
import { expireLockouts, toLockoutRows, type LockoutItem, type LockoutRow } from './lockouts';

/** A row's status is the health model's state (lib/healthmodel.ts): no list of its own. */
export type CooldownStatus = HealthState;

/** Filter order (and the order of the status checkboxes): the health model's connection states. */
export const STATUSES: readonly CooldownStatus[] = CONNECTION_STATES;

/** Shown unless the person asks: what the health model shows by default (all but serving). */
export const DEFAULT_STATUSES: ReadonlySet<CooldownStatus> = new Set<CooldownStatus>(STATUSES.filter((s) => stateInfo(s).shownByDefault));

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
  /** The health model's entry for this connection (the row's state comes from here). */
  health?: Partial<ConnHealth> | null;
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

function parseInstant(v: string | number | null | undefined): number | null {
  if (v == null || v === '') return null;
  if (typeof v === 'number') return Number.isFinite(v) ? (v < 1e12 ? v * 1000 : v) : null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/**
 * The health state as the countdowns stand at `now`: a state that does not
 * end by itself (terminal, key_rejected, endpoint_not_found, unreachable,
 * disabled) stays as reported; a running breaker, lease or model lock (the
 * health model's deadline) stays; a running cooldown is cooling; else a
 * running lockout is models_locked; else it serves again.
 */
export function deriveStatus(c: Pick<ManagedConnection, 'reported' | 'until' | 'lockoutRows'>, now: number): CooldownStatus {
  const info = stateInfo(c.reported);
  if (!info.timed && !info.serving) return c.reported as CooldownStatus;
  if (info.timed && c.until > now) return c.reported as CooldownStatus;
  if (c.until > now) return 'cooling';
  if (c.lockoutRows.some((l) => l.until > now)) return 'models_locked';
  return c.reported === 'degraded' ? 'degraded' : 'serving';
}

/** The health model's state of a cooldown row: its `health` entry, else its legacy `status`. */
export function reportedState(c: Pick<CooldownConnection, 'status' | 'health'>): string {
  return toHealthState(typeof c.health?.state === 'string' && c.health.state ? c.health.state : c.status);
}

/** Builds the page's rows from the API answer, received at `now`. */
export function toManagedConnections(list: readonly CooldownConnection[] | null | undefined, now: number): ManagedConnection[] {
  const out: ManagedConnection[] = [];
  for (const c of list ?? []) {
    if (!c || typeof c.id !== 'string') continue;
    const reported = reportedState(c);
    let until = 0;
    if (typeof c.cooldownRemainingMs === 'number' && c.cooldownRemainingMs > 0) until = now + c.cooldownRemainingMs;
    else if (reported === 'cooling') until = parseInstant(c.rateLimitedUntil) ?? instant(c.health?.until) ?? 0;
    else if (stateInfo(reported).timed) until = instant(c.health?.until) ?? 0;
    const lockoutRows = toLockoutRows(
      (c.lockouts ?? []).map((l) => ({ ...l, provider: l.provider || c.provider, connectionId: l.connectionId || c.id, connectionName: l.connectionName ?? c.name ?? null })),
      now,
    );
    const row: ManagedConnection = { ...c, provider: String(c.provider ?? ''), reported, until, lockoutRows };
    row.status = deriveStatus(row, now);
    out.push(row);
  }
  return out.sort(
    (a, b) => stateRank(a.status) - stateRank(b.status) || (a.name || a.id).localeCompare(b.name || b.id),
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
  let reported: string = ev.terminal || ev.status === 'terminal' ? 'terminal' : 'serving';
  // A cooldown event says nothing about the provider breaker or a lease: a running one stays.
  if ((r.reported === 'breaker_open' || r.reported === 'leased') && reported === 'serving' && r.until > now && !(remaining && remaining > 0)) {
    reported = r.reported;
    until = r.until;
  }
  // Nor about reachability, the switch, a key or a URL: a state that does not
  // end by itself stays until the health model says otherwise (a rejected key
  // or a wrong base URL is a terminal state with its own name).
  const was = stateInfo(r.reported);
  if (!was.timed && !was.serving && (reported === 'serving' || !was.clearable)) reported = r.reported;
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

/** Connections that need new credentials or a new base URL (the health model says not clearable) are never cleared from here. */
export function isSelectable(r: Pick<CooldownConnection, 'status'>): boolean {
  return stateInfo(r.status).clearable;
}

/** Keeps only selected ids that are shown and selectable (clearing never touches a hidden row). */
export function pruneSelection(selected: ReadonlySet<string>, shown: readonly Pick<CooldownConnection, 'id' | 'status'>[]): Set<string> {
  const ok = new Set(shown.filter(isSelectable).map((r) => r.id));
  return new Set([...selected].filter((id) => ok.has(id)));
}

const KNOWN = new Set<string>(STATUSES);

/** "cooling,terminal" → those states (older names such as cooling_down are read too); null for a missing or useless parameter. */
export function parseStatusParam(v: string | null | undefined): Set<CooldownStatus> | null {
  if (!v) return null;
  const set = new Set(
    v
      .split(',')
      .map((s) => toHealthState(s.trim()))
      .filter((s): s is CooldownStatus => KNOWN.has(s)),
  );
  return set.size ? set : null;
}

export function statusParam(statuses: ReadonlySet<string>): string | null {
  const same = statuses.size === DEFAULT_STATUSES.size && [...statuses].every((s) => DEFAULT_STATUSES.has(s as CooldownStatus));
  return same ? null : STATUSES.filter((s) => statuses.has(s)).join(',');
}

const TERMINAL_LABELS: Record<string, string> = { banned: 'Banned', expired: 'Expired', credits_exhausted: 'Credits exhausted' };

/** The badge of a row: the health model's label, tone and sentence; a terminal one names why (banned, expired, credits exhausted). */
export function statusBadge(status: string | null | undefined, testStatus?: string | null): { label: string; tone: Tone; description: string } {
  const info = stateInfo(status);
  if (status === 'terminal') {
    const why = TERMINAL_LABELS[(testStatus ?? '').toLowerCase()];
    if (why) return { label: `${info.label}: ${why.toLowerCase()}`, tone: info.tone, description: info.description };
  }
  return { label: info.label, tone: info.tone, description: info.description };
}

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
