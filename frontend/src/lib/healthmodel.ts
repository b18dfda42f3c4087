// The gateway's one health model (docs/health-and-usage.md) as the dashboard
// shows it: the report types, the badge of each state, the "what is not
// serving" list the Overview leads with, and the shared store every page reads,
// fed by `health` events and GET /api/monitoring/health. Pure except the store.

import type { Tone } from './health';
import { formatDuration } from './format';
import { stateWords } from './words';

export type HealthState =
  | 'setup'
  | 'disabled'
  | 'terminal'
  | 'key_rejected'
  | 'endpoint_not_found'
  | 'unreachable'
  | 'breaker_open'
  | 'cooling'
  | 'models_locked'
  | 'leased'
  | 'degraded'
  | 'serving'
  | 'dead'
  | 'disk_full';

/**
 * Every state the gateway's health model (backend/health/health.go) can
 * report, worst first. tests/unit/states.test.ts parses the Go constants and
 * fails when the backend gains a state this list lacks.
 */
export const HEALTH_STATES: readonly HealthState[] = [
  'setup',
  'disabled',
  'terminal',
  'key_rejected',
  'endpoint_not_found',
  'unreachable',
  'breaker_open',
  'cooling',
  'models_locked',
  'leased',
  'degraded',
  'serving',
  'dead',
  'disk_full',
];

/** The states a connection can be in (the Cooldown Manager's filters, in this order). */
export const CONNECTION_STATES: readonly HealthState[] = [
  'breaker_open',
  'unreachable',
  'key_rejected',
  'endpoint_not_found',
  'terminal',
  'cooling',
  'leased',
  'models_locked',
  'degraded',
  'disabled',
  'serving',
];

export interface HealthLock {
  model: string;
  scope?: string;
  reason?: string;
  since?: string;
  until?: string;
}

export interface HealthBlock {
  state: HealthState | string;
  reason: string;
  since?: string;
  until?: string;
}

export interface ConnHealth {
  id: string;
  name: string;
  provider: string;
  providerName?: string;
  state: HealthState | string;
  serving: boolean;
  reason?: string;
  since?: string;
  until?: string;
  blocks?: HealthBlock[];
  locks?: HealthLock[];
  leasedBy?: string;
  /** The holding lease's id (the release_lease fix). */
  leaseId?: string;
  /** The model the holding lease was taken for. */
  leasedModel?: string;
  fixes?: string[];
}

export interface ProviderHealthM {
  id: string;
  name?: string;
  state: HealthState | string;
  breaker?: string;
  failures?: number;
  reason?: string;
  since?: string;
  until?: string;
  serving?: number;
  total?: number;
  retryAfterMs?: number;
}

/** One connection a combo target could go to, as the health model sees it. */
export interface ComboCandidate {
  id: string;
  name: string;
  state: HealthState | string;
  reason?: string;
  fixes?: string[];
}

/** One combo member: served or not, why, and its connections with their fixes. */
export interface ComboTargetHealth {
  model: string;
  serving: boolean;
  reason?: string;
  /** When its first connection is back by itself (absent: serving, or none comes back without a fix). */
  until?: string;
  connections?: ComboCandidate[];
}

export interface ComboHealth {
  id?: string;
  name: string;
  state: HealthState | string;
  reason?: string;
  until?: string;
  serving?: number;
  total?: number;
  targets?: ComboTargetHealth[];
  fixes?: string[];
}

export interface HealthSummary {
  status: string;
  serving: number;
  total: number;
  /** The not-serving split (each connection in one): serving + cooling + breakerOpen + outOfService = total. */
  cooling?: number;
  breakerOpen?: number;
  outOfService?: number;
  modelsServable?: number;
  modelsTotal?: number;
  fraction?: number;
  nextId?: string;
  nextName?: string;
  nextBack?: string;
  locks?: number;
  leases?: number;
  deadCombos?: number;
}

/** The health part of GET /api/monitoring/health and of `health` events. */
export interface HealthReport {
  status?: string;
  generatedAt?: string;
  summary?: HealthSummary;
  connections?: ConnHealth[];
  providers?: ProviderHealthM[];
  combos?: ComboHealth[];
}

export interface StateBadge {
  label: string;
  tone: Tone;
}

/** The badge of a connection / provider / combo state: never "healthy" unless it serves. */
export function stateBadge(state: string | null | undefined): StateBadge {
  const b = badgeOf(state);
  // The label from the one catalogue of words (GET /api/words) when loaded.
  const w = stateWords(state);
  return w?.label ? { label: w.label, tone: b.tone } : b;
}

/** What a state means for every page: its badge, whether it serves, whether lists show it by default. */
export interface StateInfo extends StateBadge {
  state: string;
  /** True when the connection takes requests (models_locked: its other models; degraded: with a wobbly breaker). */
  serving: boolean;
  /** Lists of "what is out of routing" (Cooldown Manager, Overview) show every state but serving. */
  shownByDefault: boolean;
  /** One sentence: what it means and what brings it back. */
  description: string;
  /** A few words under a problem with no countdown ("needs new credentials"); "" when timed or serving. */
  hint: string;
  /** Ends by itself at the state's `until` (cooling, breaker_open, leased, models_locked). */
  timed: boolean;
  /** Clearing cooldowns can bring it back (false when new credentials or a new base URL are needed). */
  clearable: boolean;
}

const TIMED = new Set<string>(['cooling', 'breaker_open', 'leased', 'models_locked']);
const NEEDS_EDIT = new Set<string>(['terminal', 'key_rejected', 'endpoint_not_found']);

const HINTS: Record<string, string> = {
  terminal: 'needs new credentials or a passing Test',
  key_rejected: 'needs new credentials',
  endpoint_not_found: 'this URL answers 404: check the base URL',
  unreachable: 'nothing answers: check its address and your network',
  disabled: 'switched off',
};

const DESCRIPTIONS: Record<string, string> = {
  setup: 'Nothing is configured yet: add a provider connection.',
  disabled: 'Switched off by a person: enable it to put it back in routing.',
  terminal: 'Out of service until its credentials change or a Test passes (banned, expired or out of credits); clearing cooldowns does not bring it back.',
  key_rejected: 'The provider rejected this key: replace it to put the connection back in service; clearing cooldowns does not.',
  endpoint_not_found: 'This URL answers 404: check the base URL (often a missing /v1); clearing cooldowns does not bring it back.',
  unreachable: 'The upstream has not answered (closed port, wrong host, no network): check the base URL; the next answer brings it back.',
  breaker_open: 'Its provider circuit breaker is OPEN: out of routing until it half-opens (reset it to retry now).',
  cooling: 'Out of routing until the cooldown ends (rate limit or transient error).',
  models_locked: 'Serving, but one or more models are locked out on it.',
  leased: 'Held by another key’s exclusive lease: not serving anyone else until it is released or expires.',
  degraded: 'Serving, but its provider breaker is degraded or half-open.',
  serving: 'Available for routing.',
  dead: 'None of its targets can be served now.',
  disk_full: 'The disk holding the database is full: requests are routed but nothing can be saved.',
};

const SERVING = new Set<string>(['serving', 'degraded', 'models_locked']);

/** The one place every page reads a state from: label, tone, serving, shown by default, description. */
export function stateInfo(state: string | null | undefined): StateInfo {
  const b = stateBadge(state);
  const s = state ?? '';
  const w = stateWords(state);
  return {
    ...b,
    state: s,
    serving: SERVING.has(s),
    shownByDefault: s !== 'serving',
    description: w?.sentence || DESCRIPTIONS[s] || '',
    hint: HINTS[s] ?? '',
    timed: TIMED.has(s),
    clearable: !NEEDS_EDIT.has(s),
  };
}

/** True when the state takes requests (see stateInfo). */
export function isServingState(state: string | null | undefined): boolean {
  return SERVING.has(state ?? '');
}

/** The Overview's connection tiles, from one pass over the health model. */
export interface ConnectionCounts {
  total: number;
  /** Takes at least some requests now (the model's `serving` flag). */
  serving: number;
  /** Not serving, cooling down (back by itself). */
  cooling: number;
  /** Not serving, its provider breaker open (back by itself). */
  breakerOpen: number;
  /** Not serving for any other reason: key rejected, wrong base URL, unreachable, terminal, switched off, leased to another key. */
  outOfService: number;
}

/**
 * Counts connections the way every Overview tile shows them: serving by the
 * model's own flag, and each one not serving in exactly one of cooling,
 * breaker open or out of service, so the tiles always add up to the total.
 */
export function connectionCounts(conns: readonly Pick<ConnHealth, 'state' | 'serving'>[] | null | undefined): ConnectionCounts {
  const out: ConnectionCounts = { total: 0, serving: 0, cooling: 0, breakerOpen: 0, outOfService: 0 };
  for (const c of conns ?? []) {
    out.total++;
    if (c.serving) out.serving++;
    else if (c.state === 'cooling') out.cooling++;
    else if (c.state === 'breaker_open') out.breakerOpen++;
    else out.outOfService++;
  }
  return out;
}

/** Worst-first rank of a state (unknown states last). */
export function stateRank(state: string | null | undefined): number {
  return ORDER[state ?? ''] ?? 9;
}

const LEGACY: Record<string, HealthState> = {
  healthy: 'serving',
  active: 'serving',
  cooling_down: 'cooling',
  model_locked: 'models_locked',
  unavailable: 'disabled',
  banned: 'terminal',
  expired: 'terminal',
  credits_exhausted: 'terminal',
};

/**
 * A state in the health model's words from an older field (a cooldown row's
 * `status`, a connection's `testStatus`): "cooling_down" → "cooling",
 * "healthy" → "serving"; health-model names pass through.
 */
export function toHealthState(v: string | null | undefined): HealthState | string {
  const s = (v ?? '').trim().toLowerCase();
  if ((HEALTH_STATES as readonly string[]).includes(s)) return s;
  return LEGACY[s] ?? (s || 'serving');
}

/** The fields of a connection row that decide its state when the health model has no entry for it. */
export interface ConnectionFields {
  isActive?: boolean | null;
  testStatus?: string | null;
  rateLimitedUntil?: string | number | null;
}

/** A connection's health state from its own fields (the fallback before the first health report). */
export function connectionFieldsState(c: ConnectionFields, now = Date.now()): HealthState | string {
  if (c.isActive === false) return 'disabled';
  const t = (c.testStatus ?? '').trim().toLowerCase();
  if (['key_rejected', 'endpoint_not_found', 'unreachable', 'banned', 'expired', 'credits_exhausted'].includes(t)) return toHealthState(t);
  const u = c.rateLimitedUntil;
  const until = u == null || u === '' ? null : typeof u === 'number' ? u : Date.parse(u);
  if (until != null && Number.isFinite(until) && until > now) return 'cooling';
  return 'serving';
}

/** A connection's badge: the health model's state when it has one, else the row's own fields. */
export function connectionBadge(c: ConnectionFields & { id: string }, model: Pick<ConnHealth, 'state'> | null | undefined, now = Date.now()): StateInfo {
  return stateInfo(model ? model.state : connectionFieldsState(c, now));
}

function badgeOf(state: string | null | undefined): StateBadge {
  switch (state) {
    case 'unreachable':
      return { label: 'Unreachable', tone: 'bad' };
    case 'serving':
      return { label: 'Healthy', tone: 'ok' };
    case 'leased':
      // Held by a key's exclusive lease: not serving for anyone else.
      return { label: 'Leased', tone: 'warn' };
    case 'key_rejected':
      return { label: 'Key rejected', tone: 'bad' };
    case 'endpoint_not_found':
      // The base URL answers 404 to the credential check (a missing /v1).
      return { label: 'Wrong base URL', tone: 'bad' };
    case 'degraded':
      return { label: 'Degraded', tone: 'warn' };
    case 'models_locked':
      return { label: 'Models locked', tone: 'warn' };
    case 'cooling':
      return { label: 'Cooling down', tone: 'warn' };
    case 'breaker_open':
      return { label: 'Breaker open', tone: 'bad' };
    case 'terminal':
      return { label: 'Out of service', tone: 'bad' };
    case 'dead':
      return { label: 'Dead', tone: 'bad' };
    case 'disabled':
      return { label: 'Disabled', tone: 'muted' };
    case 'setup':
      return { label: 'Set up', tone: 'muted' };
    case 'disk_full':
      return { label: 'Disk full', tone: 'bad' };
    default:
      return { label: state ? state.replace(/_/g, ' ') : 'Unknown', tone: 'muted' };
  }
}

/** Epoch ms of an RFC 3339 time; null when absent or unparsable. */
export function instant(v: string | null | undefined): number | null {
  if (!v) return null;
  const t = Date.parse(v);
  return Number.isFinite(t) && t > 0 ? t : null;
}

/** "back in 14 min" / "back any moment" / "" (no deadline). */
export function backIn(until: string | number | null | undefined, now = Date.now()): string {
  const t = typeof until === 'number' ? until : instant(until ?? null);
  if (t == null) return '';
  const left = t - now;
  if (left <= 0) return 'back any moment';
  return `back in ${formatDuration(Math.ceil(left / 1000) * 1000)}`;
}

/** The overall sentence: "2 of 5 connections serving · Work back in 14 min" (the tray's status line). */
export function statusLine(r: HealthReport | null | undefined, now = Date.now()): string {
  const s = r?.summary;
  if (!s) return '';
  if (!s.total) return 'Set up: add a provider connection';
  let line = s.serving === s.total ? (s.total === 1 ? '1 connection serving' : `All ${s.total} connections serving`) : `${s.serving} of ${s.total} connections serving`;
  const back = backIn(s.nextBack, now);
  if (s.nextName && back) line += ` · ${s.nextName} ${back}`;
  else if (s.locks) line += ` · ${s.locks} model ${s.locks === 1 ? 'lock' : 'locks'}`;
  return line;
}

/** One thing that is not (fully) serving, as the Overview lists it. */
export interface Problem {
  kind: 'connection' | 'provider' | 'combo';
  id: string;
  name: string;
  /** Provider display name, with the raw id for hover. */
  provider?: string;
  providerId?: string;
  state: string;
  reason: string;
  since?: string;
  until?: string;
  fixes: string[];
  locks: HealthLock[];
  /** The holding lease (leased connections: the release_lease fix). */
  leaseId?: string;
  leasedBy?: string;
  leasedModel?: string;
  /** A dead combo's targets, each with why and its connections' fixes. */
  targets?: ComboTargetHealth[];
  /** False when it still serves part of its traffic (some models locked). */
  down: boolean;
}

const ORDER: Record<string, number> = { breaker_open: 0, unreachable: 1, key_rejected: 1, endpoint_not_found: 1, terminal: 1, cooling: 2, dead: 3, leased: 4, models_locked: 4, degraded: 5, disabled: 6 };

/**
 * What is broken and when is it back: every connection that is not fully
 * serving (disabled ones last), each open-breaker provider without a
 * connection listed, and every dead combo; worst first, then soonest back.
 */
export function problems(r: HealthReport | null | undefined): Problem[] {
  const out: Problem[] = [];
  const connProviders = new Set<string>();
  for (const c of r?.connections ?? []) {
    // A leased connection serves only its holder: for everyone else it is not serving.
    if (c.state === 'serving' || (c.state === 'leased' && c.serving)) continue;
    connProviders.add(c.provider);
    out.push({
      kind: 'connection',
      id: c.id,
      name: c.name || c.id,
      provider: c.providerName || c.provider,
      providerId: c.provider,
      state: c.state,
      reason: c.reason ?? '',
      ...(c.since ? { since: c.since } : {}),
      ...(c.until ? { until: c.until } : {}),
      fixes: c.fixes ?? [],
      locks: c.locks ?? [],
      ...(c.leaseId ? { leaseId: c.leaseId } : {}),
      ...(c.leasedBy ? { leasedBy: c.leasedBy } : {}),
      ...(c.leasedModel ? { leasedModel: c.leasedModel } : {}),
      down: !c.serving,
    });
  }
  for (const p of r?.providers ?? []) {
    if (p.state !== 'breaker_open' || connProviders.has(p.id)) continue;
    out.push({
      kind: 'provider',
      id: p.id,
      name: p.name || p.id,
      provider: p.name || p.id,
      providerId: p.id,
      state: p.state,
      reason: p.reason ?? '',
      ...(p.since ? { since: p.since } : {}),
      ...(p.until ? { until: p.until } : {}),
      fixes: ['reset_breaker'],
      locks: [],
      down: true,
    });
  }
  for (const c of r?.combos ?? []) {
    if (c.state !== 'dead') continue;
    out.push({
      kind: 'combo',
      id: c.id ?? c.name,
      name: c.name,
      state: c.state,
      reason: c.reason ?? '',
      ...(c.until ? { until: c.until } : {}),
      fixes: [], // a combo's fixes are its targets' connections' (below each target)
      locks: [],
      targets: c.targets ?? [],
      down: true,
    });
  }
  return out.sort(
    (a, b) =>
      (ORDER[a.state] ?? 9) - (ORDER[b.state] ?? 9) ||
      (instant(a.until) ?? Infinity) - (instant(b.until) ?? Infinity) ||
      a.name.localeCompare(b.name),
  );
}

// ---------------------------------------------------------------- the shared store

type Listener = (r: HealthReport) => void;

/** The latest health report; every page reads it so none can disagree. */
export class HealthStore {
  private report: HealthReport | null = null;
  private listeners = new Set<Listener>();

  get(): HealthReport | null {
    return this.report;
  }

  /** Stores a report (from an event or a poll) and tells the subscribers. */
  set(r: HealthReport | null | undefined): void {
    if (!r || !Array.isArray(r.connections)) return; // anonymous or legacy payloads carry no model
    this.report = r;
    for (const fn of [...this.listeners]) {
      try {
        fn(r);
      } catch (err) {
        console.warn('health listener failed', err);
      }
    }
  }

  clear(): void {
    this.report = null;
  }

  /** Calls fn with the current report (if any) and on every new one; returns the unsubscribe. */
  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    if (this.report) fn(this.report);
    return () => this.listeners.delete(fn);
  }

  connection(id: string): ConnHealth | undefined {
    return this.report?.connections?.find((c) => c.id === id);
  }

  provider(id: string): ProviderHealthM | undefined {
    return this.report?.providers?.find((p) => p.id === id);
  }
}

export const healthStore = new HealthStore();
