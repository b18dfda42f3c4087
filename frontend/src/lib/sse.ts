// Pure parts of the live event stream (GET /api/events): parsing one SSE
// message into a typed event, the reconnect backoff schedule, and the one-line
// description the Overview feed shows. The EventSource wrapper is in ../live.ts.

import type { ConnectionEventData } from './health';
import { formatDuration } from './format';
import { sentence } from './words';
import type { Tone } from './health';
import { connectionCounts, type ConnHealth } from './healthmodel';
import { countsLine } from './overview-numbers';

export interface HealthEventData {
  status: string;
  circuitBreakers?: { open?: number; halfOpen?: number; degraded?: number; closed?: number; total?: number };
  connectionHealth?: { coolingDown?: number; terminal?: number; total?: number; soonestRetryAfterMs?: number };
}

export interface BreakerEventData {
  provider: string;
  state: string;
  failures?: number;
  openCycles?: number;
  retryAfterMs?: number;
}

export interface RequestEventData {
  requestId: string;
  model?: string;
  status: number;
  connectionId?: string;
  provider?: string;
  /** The number of attempts (the log endpoint has the attempt list). */
  attempts?: number;
  latencyMs?: number;
  errorCode?: string;
  stream?: boolean;
  queueMs?: number;
  upstreamMs?: number;
  queueReason?: string;
}

export interface SettingsEventData {
  section: string;
}

/** A model on one connection was locked out, reactivated, or its lockout lapsed. */
export interface LockoutEventData {
  action: 'locked' | 'cleared' | 'decayed' | string;
  /** Absent (or empty) on a bulk clear, which carries only `removed`. */
  provider?: string;
  connectionId?: string;
  model?: string;
  scope?: string;
  remainingMs?: number;
  failureCount?: number;
  /** How many locks a clear removed. */
  removed?: number;
}

/** An exclusive session lease was acquired or released (no owner data); pages refetch for the rest. */
export interface LeaseEventData {
  action?: 'acquired' | 'released' | 'operator_released' | string;
  id?: string;
  connectionId?: string;
  connectionName?: string;
  model?: string;
  generation?: number;
  /** Active leases after the change. */
  active?: number;
  [key: string]: unknown;
}

/** A subscription login was imported, its token refreshed, or its usage wall state changed. */
export interface SubscriptionEventData {
  id: string;
  /** The import source, after an import. */
  imported?: string;
  created?: boolean;
  tokenRefreshed?: boolean;
  /** The wall transition, e.g. offer_accepted, max_wait, weekly_limit, reset_reset. */
  wall?: string;
}

/** A key's spend crossed 80 % or 100 % of its budget (docs/COST.md). */
export interface BudgetEventData {
  keyId: string;
  keyName?: string;
  percent: number;
  usd?: number;
  tokens?: number;
  budget?: { usd?: number; tokens?: number; period?: string };
}

/** The client API was paused or resumed (tray or PATCH /api/gateway). */
export interface GatewayEventData {
  paused: boolean;
}

interface Base<T extends string, D> {
  /** The bus sequence number; health events have none. */
  id: number | null;
  type: T;
  /** ISO time from the gateway, or the receive time for health events. */
  at: string;
  data: D;
}

export type LiveEvent =
  | Base<'health', HealthEventData>
  | Base<'breaker', BreakerEventData>
  | Base<'connection', ConnectionEventData>
  | Base<'request', RequestEventData>
  | Base<'settings', SettingsEventData>
  | Base<'gateway', GatewayEventData>
  | Base<'lockout', LockoutEventData>
  | Base<'lease', LeaseEventData>
  | Base<'subscription', SubscriptionEventData>
  | Base<'budget', BudgetEventData>;

export type LiveEventType = LiveEvent['type'];

export const LIVE_EVENT_TYPES: readonly LiveEventType[] = ['health', 'breaker', 'connection', 'request', 'settings', 'gateway', 'lockout', 'lease', 'subscription', 'budget'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses one SSE message. Every event's `data:` is an envelope
 * `{"id","type","at","data":{…}}`, except `health`, whose data is the payload
 * itself (see backend/api/events.go). Returns null for malformed or unknown
 * messages, which are ignored rather than breaking the feed.
 */
export function parseLiveEvent(type: string, raw: string, now: () => Date = () => new Date()): LiveEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isObject(parsed)) return null;
  if (type === 'health') {
    if (typeof parsed['status'] !== 'string') return null;
    return { id: null, type: 'health', at: now().toISOString(), data: parsed as unknown as HealthEventData };
  }
  if (!(LIVE_EVENT_TYPES as readonly string[]).includes(type)) return null;
  const data = parsed['data'];
  if (!isObject(data)) return null;
  const id = typeof parsed['id'] === 'number' ? parsed['id'] : null;
  const at = typeof parsed['at'] === 'string' ? parsed['at'] : now().toISOString();
  switch (type) {
    case 'breaker':
      if (typeof data['provider'] !== 'string') return null;
      break;
    case 'connection':
    case 'subscription':
      if (typeof data['id'] !== 'string') return null;
      break;
    case 'request':
      if (typeof data['status'] !== 'number') return null;
      break;
    case 'settings':
      if (typeof data['section'] !== 'string') return null;
      break;
    case 'gateway':
      if (typeof data['paused'] !== 'boolean') return null;
      break;
    case 'lockout':
    case 'lease':
      if (typeof data['action'] !== 'string') return null;
      break;
    case 'budget':
      if (typeof data['keyId'] !== 'string' || typeof data['percent'] !== 'number') return null;
      break;
  }
  return { id, type, at, data } as unknown as LiveEvent;
}

export interface BackoffOptions {
  baseMs: number;
  factor: number;
  maxMs: number;
  /** ± fraction of the delay, so many dashboards do not reconnect in lockstep. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, factor: 2, maxMs: 30_000, jitter: 0.2 };

/**
 * Delay before reconnect attempt `attempt` (0 = the first retry after a drop):
 * 1 s, 2 s, 4 s, 8 s, 16 s, then 30 s, each ± 20 %. `random` is injectable
 * (0.5 means no jitter).
 */
export function backoffDelay(attempt: number, opts: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const n = Math.max(0, Math.floor(attempt));
  const raw = Math.min(opts.maxMs, opts.baseMs * opts.factor ** Math.min(n, 30));
  const spread = raw * opts.jitter * (random() * 2 - 1);
  return Math.max(0, Math.round(Math.min(opts.maxMs * (1 + opts.jitter), raw + spread)));
}

export interface FeedLine {
  title: string;
  detail: string;
  tone: Tone;
}

/** How the Overview feed shows an event. `names` maps connection ids to names. */
export function describeEvent(ev: LiveEvent, names: ReadonlyMap<string, string> = new Map()): FeedLine {
  switch (ev.type) {
    case 'health': {
      const s = ev.data.status;
      const ch = ev.data.connectionHealth;
      const cb = ev.data.circuitBreakers;
      // The health model's connections: the same split as the Overview's tiles and status line.
      const conns = (ev.data as { connections?: unknown }).connections;
      if (Array.isArray(conns)) {
        return { title: `Gateway ${s}`, detail: countsLine(connectionCounts(conns as ConnHealth[])), tone: s === 'healthy' ? 'ok' : s === 'degraded' ? 'warn' : 'bad' };
      }
      const bits: string[] = [];
      if (ch?.coolingDown) bits.push(`${ch.coolingDown} cooling down`);
      if (ch?.terminal) bits.push(`${ch.terminal} out of service`);
      if (cb?.open) bits.push(`${cb.open} breaker${cb.open === 1 ? '' : 's'} open`);
      return {
        title: `Gateway ${s}`,
        detail: bits.join(' · ') || 'all connections available',
        tone: s === 'healthy' ? 'ok' : s === 'degraded' ? 'warn' : 'bad',
      };
    }
    case 'breaker': {
      const d = ev.data;
      const state = d.state.toUpperCase();
      const retry = d.retryAfterMs ? ` · retry in ${formatDuration(d.retryAfterMs)}` : '';
      return {
        title: `Breaker ${state.toLowerCase().replace(/_/g, '-')}: ${d.provider}`,
        detail: `${d.failures ?? 0} failure${d.failures === 1 ? '' : 's'}${retry}`,
        tone: state === 'CLOSED' ? 'ok' : state === 'OPEN' ? 'bad' : 'warn',
      };
    }
    case 'connection': {
      const d = ev.data;
      // By name, the reason in words (issue 42): never an id or a raw code.
      const who = d.name || names.get(d.id) || 'A connection';
      if (d.status === 'cooling_down') {
        const why = sentence(d.errorCode || d.lastErrorType).replace(/\.$/, '');
        return {
          title: `${who} cooling down for ${formatDuration(d.cooldownRemainingMs ?? 0)}`,
          detail: why || 'transient error',
          tone: 'warn',
        };
      }
      if (d.status === 'terminal' || d.terminal) {
        return { title: `${who} out of service: ${(d.terminal || 'terminal').replace(/_/g, ' ')}`, detail: sentence(d.errorCode || d.lastErrorType).replace(/\.$/, ''), tone: 'bad' };
      }
      return { title: `${who} healthy`, detail: 'available for routing', tone: 'ok' };
    }
    case 'request': {
      const d = ev.data;
      const ok = d.status >= 200 && d.status < 400;
      const where = d.connectionId ? names.get(d.connectionId) || d.provider || '' : d.provider || '';
      const bits = [
        where ? `via ${where}` : '',
        d.latencyMs != null ? formatDuration(d.latencyMs) : '',
        d.attempts && d.attempts > 1 ? `${d.attempts} attempts` : '',
        d.errorCode ? sentence(d.errorCode).replace(/\.$/, '') : '',
        d.stream ? 'stream' : '',
      ].filter(Boolean);
      return { title: `${d.status} ${d.model || 'request'}`, detail: bits.join(' · '), tone: ok ? 'ok' : 'bad' };
    }
    case 'settings':
      return { title: `Settings changed: ${ev.data.section}`, detail: '', tone: 'muted' };
    case 'lockout': {
      const d = ev.data;
      const who = (d.connectionId && names.get(d.connectionId)) || d.provider || d.connectionId || '';
      const where = who ? ` on ${who}` : '';
      const scope = d.scope && d.scope !== 'exact' ? ` · scope ${d.scope.replace(/_/g, ' ')}` : '';
      if (!d.model) {
        const n = d.removed ?? 0;
        return { title: `${n || 'All'} model lockout${n === 1 ? '' : 's'} cleared${where}`, detail: d.provider || '', tone: 'ok' };
      }
      if (d.action === 'locked') {
        const fails = d.failureCount ? ` · ${d.failureCount} failure${d.failureCount === 1 ? '' : 's'}` : '';
        return { title: `${d.model} locked${where} for ${formatDuration(d.remainingMs ?? 0)}`, detail: `${d.provider ?? ''}${scope}${fails}`, tone: 'warn' };
      }
      if (d.action === 'cleared') return { title: `${d.model} reactivated${where}`, detail: d.provider ?? '', tone: 'ok' };
      if (d.action === 'decayed') return { title: `${d.model} lockout lifted${where} after a success`, detail: d.provider ?? '', tone: 'ok' };
      return { title: `${d.model} lockout ${d.action}${where}`, detail: d.provider ?? '', tone: 'muted' };
    }
    case 'subscription': {
      const d = ev.data;
      const who = names.get(d.id) || d.id;
      if (d.imported) return { title: `${d.created ? 'Imported' : 'Re-imported'} ${d.imported} login`, detail: who, tone: 'ok' };
      if (d.tokenRefreshed) return { title: `Token refreshed: ${who}`, detail: '', tone: 'muted' };
      const wall = (d.wall || 'changed').replace(/_/g, ' ');
      return { title: `${who}: usage wall ${wall}`, detail: '', tone: d.wall === 'offer_accepted' || d.wall?.startsWith('reset_reset') ? 'ok' : 'warn' };
    }
    case 'lease': {
      const d = ev.data;
      const where = d.connectionId ? names.get(d.connectionId) || d.connectionName || d.connectionId : d.connectionName || '';
      const raw = typeof d.action === 'string' && d.action ? d.action : 'changed';
      const action = raw === 'operator_released' ? 'released by an operator' : raw.replace(/_/g, ' ');
      const bits = [typeof d.model === 'string' ? d.model : '', typeof d.active === 'number' ? `${d.active} active` : ''].filter(Boolean);
      return {
        title: `Lease ${action}${where ? ` on ${where}` : ''}`,
        detail: bits.join(' · '),
        tone: action === 'acquired' || action === 'renewed' ? 'ok' : 'muted',
      };
    }
    case 'budget': {
      const d = ev.data;
      const b = d.budget ?? {};
      const spent = b.usd != null ? `$${(d.usd ?? 0).toFixed(4)} of $${b.usd.toFixed(4)}` : b.tokens != null ? `${d.tokens ?? 0} of ${b.tokens} tokens` : '';
      return {
        title: `Key “${d.keyName || d.keyId}” at ${d.percent} % of its ${b.period ?? ''} budget`.replace('  ', ' '),
        detail: d.percent >= 100 ? `${spent}; its requests are refused` : spent,
        tone: d.percent >= 100 ? 'bad' : 'warn',
      };
    }
    case 'gateway':
      return ev.data.paused
        ? { title: 'Gateway paused', detail: 'clients get 503 until it is resumed', tone: 'warn' }
        : { title: 'Gateway resumed', detail: 'clients are served again', tone: 'ok' };
  }
}
