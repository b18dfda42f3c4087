// Pure logic of the Model Cooldowns page (and the lockouts listed in the
// Cooldown Manager): active model lockouts from
// GET /api/resilience/model-cooldowns turned into rows with a deadline, rows
// that expire as their countdown reaches zero, and live `lockout` events folded
// into the table. Unit-tested in tests/unit/lockouts.test.ts.

import { sentence } from './words';
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
  /** The upstream HTTP status of the latest failure (0 = a transport error). */
  status?: number | string | null;
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

/**
 * Identifies a listed lockout. One model on one connection can be locked under
 * more than one scope at once (exact id, model, quota family), so the scope is
 * part of the key; reactivating (DELETE) names provider, connection and model only.
 */
export function lockoutKey(t: LockoutTarget & { scope?: string | null }): string {
  return JSON.stringify([t.provider, t.connectionId, t.model, t.scope ?? '']);
}

const sameTarget = (r: LockoutTarget, t: LockoutTarget): boolean => r.provider === t.provider && r.connectionId === t.connectionId && r.model === t.model;

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
    const provider = String(it.provider ?? '');
    const row: LockoutRow = { ...it, provider, key: lockoutKey({ ...it, provider }), until: deadlineOf(it, now) };
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
 * Folds a live `lockout` event into the rows. "locked" adds or updates the row
 * with a fresh deadline. "cleared" with a model removes that model's rows; a
 * bulk clear (no model, or more removed than shown) asks for a fetch.
 * "decayed" (a success halved the failure count and dropped some lock of that
 * model, scope unnamed) also asks for a fetch rather than guessing which.
 */
export function applyLockoutEvent(
  rows: readonly LockoutRow[],
  ev: LockoutEventData,
  now: number,
  names: ReadonlyMap<string, string> = new Map(),
): LockoutEventResult {
  const unchanged = (refetch: boolean): LockoutEventResult => ({ rows: [...rows], changed: false, refetch });
  const target = typeof ev.connectionId === 'string' && ev.connectionId && typeof ev.model === 'string' && ev.model ? { provider: ev.provider ?? '', connectionId: ev.connectionId, model: ev.model } : null;
  const remaining = typeof ev.remainingMs === 'number' && Number.isFinite(ev.remainingMs) ? Math.max(0, ev.remainingMs) : 0;

  if (ev.action === 'cleared') {
    if (!target) return unchanged(true);
    const next = rows.filter((r) => !(sameTarget(r, target) || (!target.provider && r.connectionId === target.connectionId && r.model === target.model)));
    const gone = rows.length - next.length;
    const more = typeof ev.removed === 'number' && ev.removed > gone; // e.g. a quota family named by another member
    return { rows: next, changed: gone > 0, refetch: more };
  }
  if (ev.action === 'locked' && target) {
    if (!remaining) return unchanged(true); // a lock without a duration: ask the gateway
    const key = lockoutKey({ ...target, scope: ev.scope ?? '' });
    const i = rows.findIndex((r) => r.key === key);
    const prev = i >= 0 ? rows[i] : undefined;
    const row: LockoutRow = {
      ...(prev ?? { ...target, connectionName: names.get(target.connectionId) ?? null }),
      key,
      until: now + remaining,
      remainingMs: remaining,
      ...(ev.scope ? { scope: ev.scope } : {}),
      ...(typeof ev.failureCount === 'number' ? { failureCount: ev.failureCount } : {}),
    };
    const next = i >= 0 ? rows.map((r, j) => (j === i ? row : r)) : [...rows, row].sort(byDisplay);
    return { rows: next, changed: true, refetch: !prev };
  }
  return unchanged(true);
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

/** The reason cell: "MODEL_NOT_FOUND · HTTP 404", "timeout · transport error". */
export function lockoutReason(r: Pick<LockoutItem, 'reason' | 'status'>): string {
  // In words (issue 42): the catalogue's sentence of the reason code or kind, never "HTTP 404" or a raw code.
  const parts: string[] = [];
  if (r.reason) parts.push(sentence(r.reason).replace(/\.$/, ''));
  if (typeof r.status === 'number' && Number.isFinite(r.status) && r.status <= 0) parts.push('no answer from the provider');
  else if (typeof r.status === 'string' && r.status && r.status !== 'locked') parts.push(r.status.replace(/_/g, ' '));
  return parts.join(' · ');
}

/** "1 model locked", "3 models locked on 2 connections". */
export function lockoutCountText(rows: readonly LockoutTarget[]): string {
  const n = rows.length;
  if (n === 0) return 'No model is locked';
  const conns = new Set(rows.map((r) => `${r.provider}\u0000${r.connectionId}`)).size;
  return `${n} model${n === 1 ? '' : 's'} locked${conns > 1 ? ` on ${conns} connections` : ''}`;
}
