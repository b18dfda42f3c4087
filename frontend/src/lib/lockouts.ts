// Pure logic of the Model Cooldowns page (and the lockouts listed in the
// Cooldown Manager): active model lockouts from
// GET /api/resilience/model-cooldowns turned into rows with a deadline, rows
// that expire as their countdown reaches zero, and live `lockout` events folded
// into the table. Unit-tested in tests/unit/lockouts.test.ts.

import type { LockoutEventData } from './sse';
import type { Tone } from './health';

export type LockoutScope = 'exact' | 'model' | 'quota_family';

/** One item of GET /api/resilience/model-cooldowns (and of a connection's `lockouts`). */
export interface LockoutItem {
  provider: string;
  connectionId: string;
  connectionName?: string | null;
  model: string;
  scope?: LockoutScope | string | null;
  reason?: string | null;
  status?: string | null;
  failureCount?: number | null;
  remainingMs?: number | null;
  expiresAt?: string | number | null;
}

/** A lockout as the page keeps it: the item plus a stable key and a deadline (epoch ms, browser clock). */
export interface LockoutRow extends LockoutItem {
  key: string;
  until: number;
}

export interface LockoutTarget {
  provider: string;
  connectionId: string;
  model: string;
}

/** Identifies a lockout: one model on one connection (what DELETE takes). */
export function lockoutKey(t: LockoutTarget): string {
  return JSON.stringify([t.provider, t.connectionId, t.model]);
}

function parseInstant(v: string | number | null | undefined): number | null {
  if (v == null || v === '') return null;
  if (typeof v === 'number') return Number.isFinite(v) ? (v < 1e12 ? v * 1000 : v) : null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/**
 * When a lockout ends, on the browser's clock. `remainingMs` (measured by the
 * gateway when it answered) is preferred over `expiresAt`, so a skewed clock
 * between gateway and browser does not shift the countdown.
 */
export function deadlineOf(item: Pick<LockoutItem, 'remainingMs' | 'expiresAt'>, now: number): number {
  if (typeof item.remainingMs === 'number' && Number.isFinite(item.remainingMs)) return now + Math.max(0, item.remainingMs);
  return parseInstant(item.expiresAt) ?? now;
}

const byDisplay = (a: LockoutRow, b: LockoutRow): number =>
  (a.connectionName || a.connectionId).localeCompare(b.connectionName || b.connectionId) ||
  a.provider.localeCompare(b.provider) ||
  a.model.localeCompare(b.model);

/** Items → rows still running at `now`, one per key, sorted by connection then model. */
export function toLockoutRows(items: readonly LockoutItem[] | null | undefined, now: number): LockoutRow[] {
  const out = new Map<string, LockoutRow>();
  for (const it of items ?? []) {
    if (!it || typeof it.model !== 'string' || typeof it.connectionId !== 'string') continue;
    const row: LockoutRow = { ...it, provider: String(it.provider ?? ''), key: lockoutKey({ provider: String(it.provider ?? ''), connectionId: it.connectionId, model: it.model }), until: deadlineOf(it, now) };
    if (row.until > now) out.set(row.key, row);
  }
  return [...out.values()].sort(byDisplay);
}

/** Splits rows into those still running at `now` and those whose countdown reached zero. */
export function expireLockouts<T extends { until: number }>(rows: readonly T[], now: number): { live: T[]; expired: T[] } {
  const live: T[] = [];
  const expired: T[] = [];
  for (const r of rows) (r.until > now ? live : expired).push(r);
  return { live, expired };
}

export interface LockoutEventResult {
  rows: LockoutRow[];
  /** The table changed. */
  changed: boolean;
  /** The event lacks something only a fetch gives (a new row's reason and connection name, an unknown action). */
  refetch: boolean;
}

/**
 * Folds a live `lockout` event into the rows: "locked" adds or updates the row
 * with a fresh deadline, "cleared" removes it, "decayed" (the lockout lapsed or
 * its failure count decayed) removes it unless time is left.
 */
export function applyLockoutEvent(
  rows: readonly LockoutRow[],
  ev: LockoutEventData,
  now: number,
  names: ReadonlyMap<string, string> = new Map(),
): LockoutEventResult {
  const key = lockoutKey(ev);
  const i = rows.findIndex((r) => r.key === key);
  const remaining = typeof ev.remainingMs === 'number' && Number.isFinite(ev.remainingMs) ? Math.max(0, ev.remainingMs) : null;
  const remove = (): LockoutEventResult => (i < 0 ? { rows: [...rows], changed: false, refetch: false } : { rows: rows.filter((r) => r.key !== key), changed: true, refetch: false });

  if (ev.action === 'cleared') return remove();
  if (ev.action === 'decayed') {
    // Time left: the failure count went down but the lock holds; otherwise it is over.
    if (!remaining) return remove();
    if (i < 0) return { rows: [...rows], changed: false, refetch: true };
  }
  if (ev.action === 'locked' || ev.action === 'decayed') {
    if (!remaining) return { ...remove(), refetch: true }; // a lock without a duration: ask the gateway
    const prev = i >= 0 ? rows[i] : undefined;
    const row: LockoutRow = {
      ...(prev ?? { provider: ev.provider, connectionId: ev.connectionId, model: ev.model, connectionName: names.get(ev.connectionId) ?? null }),
      key,
      until: now + remaining,
      remainingMs: remaining,
      ...(ev.scope ? { scope: ev.scope } : {}),
      ...(typeof ev.failureCount === 'number' ? { failureCount: ev.failureCount } : {}),
    };
    const next = i >= 0 ? rows.map((r, j) => (j === i ? row : r)) : [...rows, row].sort(byDisplay);
    return { rows: next, changed: true, refetch: !prev };
  }
  return { rows: [...rows], changed: false, refetch: true };
}

export interface ScopeInfo {
  label: string;
  description: string;
  tone: Tone;
}

/** How a lockout scope is shown. The label is the scope's own name, readable. */
export function scopeInfo(scope: string | null | undefined): ScopeInfo {
  switch (scope) {
    case 'exact':
      return { label: 'exact', description: 'Only this exact model id is locked on this connection.', tone: 'muted' };
    case 'model':
      return { label: 'model', description: 'This model (every alias of it) is locked on this connection.', tone: 'warn' };
    case 'quota_family':
      return { label: 'quota family', description: 'Every model sharing this quota family is locked on this connection.', tone: 'bad' };
    default:
      return { label: scope ? scope.replace(/_/g, ' ') : '—', description: scope ? `Scope “${scope}”.` : 'The gateway did not name a scope.', tone: 'muted' };
  }
}

/** "1 model locked", "3 models locked on 2 connections". */
export function lockoutCountText(rows: readonly LockoutTarget[]): string {
  const n = rows.length;
  if (n === 0) return 'No model is locked';
  const conns = new Set(rows.map((r) => `${r.provider}\u0000${r.connectionId}`)).size;
  return `${n} model${n === 1 ? '' : 's'} locked${conns > 1 ? ` on ${conns} connections` : ''}`;
}
