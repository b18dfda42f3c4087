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
  | 'dead';

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

const ORDER: Record<string, number> = { breaker_open: 0, key_rejected: 1, endpoint_not_found: 1, terminal: 1, cooling: 2, dead: 3, leased: 4, models_locked: 4, degraded: 5, disabled: 6 };

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
