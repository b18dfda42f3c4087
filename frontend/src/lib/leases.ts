// Pure logic of the Leases page: exclusive session leases from
// GET /api/resilience/leases turned into rows with a deadline on the browser's
// clock, and the countdown / "expired" state of a row. Only the owner's hash
// prefix is ever kept: rows are built from a whitelist of fields, so anything
// else the gateway might send about the owner never reaches the DOM.
// Unit-tested in tests/unit/leases.test.ts.

import { formatCountdown } from './format';

/** GET /api/resilience/leases item. */
export interface LeaseItem {
  id: string;
  ownerHashPrefix?: string | null;
  keyId?: string | null;
  keyName?: string | null;
  connectionId?: string | null;
  connectionName?: string | null;
  provider?: string | null;
  model?: string | null;
  generation?: number | null;
  state?: string | null;
  acquiredAt?: string | number | null;
  renewedAt?: string | number | null;
  expiresAt?: string | number | null;
  remainingMs?: number | null;
}

export interface LeaseList {
  leases: LeaseItem[];
  generatedAt?: string | null;
}

export interface LeaseRow {
  id: string;
  /** At most OWNER_PREFIX_MAX characters of the owner's hash. */
  ownerHashPrefix: string;
  keyId: string;
  keyName: string;
  connectionId: string;
  connectionName: string;
  provider: string;
  model: string;
  generation: number | null;
  state: string;
  acquiredAt: string | number | null;
  renewedAt: string | number | null;
  expiresAt: string | number | null;
  /** Deadline, epoch ms on the browser's clock. */
  until: number;
}

/** The owner is shown by a short hash prefix only, however much the gateway sends. */
export const OWNER_PREFIX_MAX = 12;

function parseInstant(v: string | number | null | undefined): number | null {
  if (v == null || v === '') return null;
  if (typeof v === 'number') return Number.isFinite(v) ? (v < 1e12 ? v * 1000 : v) : null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/**
 * When a lease ends, on the browser's clock: the gateway's `remainingMs`
 * (measured when it answered) wins over `expiresAt`, so clock skew between
 * the two does not shift the countdown.
 */
export function leaseDeadline(item: Pick<LeaseItem, 'remainingMs' | 'expiresAt'>, now: number): number {
  if (typeof item.remainingMs === 'number' && Number.isFinite(item.remainingMs)) return now + Math.max(0, item.remainingMs);
  return parseInstant(item.expiresAt) ?? now;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : String(v));
const time = (v: unknown): string | number | null => (typeof v === 'string' || typeof v === 'number' ? v : null);

/** Items → rows (whitelisted fields), soonest to expire first. Malformed items are dropped. */
export function toLeaseRows(items: readonly LeaseItem[] | null | undefined, now: number): LeaseRow[] {
  const out: LeaseRow[] = [];
  for (const it of items ?? []) {
    if (!it || typeof it !== 'object' || typeof it.id !== 'string' || !it.id) continue;
    out.push({
      id: it.id,
      ownerHashPrefix: str(it.ownerHashPrefix).slice(0, OWNER_PREFIX_MAX),
      keyId: str(it.keyId),
      keyName: str(it.keyName),
      connectionId: str(it.connectionId),
      connectionName: str(it.connectionName),
      provider: str(it.provider),
      model: str(it.model),
      generation: typeof it.generation === 'number' && Number.isFinite(it.generation) ? it.generation : null,
      // The gateway writes states in capitals (ACTIVE); compare and show them in lower case.
      state: str(it.state).toLowerCase() || 'active',
      acquiredAt: time(it.acquiredAt),
      renewedAt: time(it.renewedAt),
      expiresAt: time(it.expiresAt),
      until: leaseDeadline(it, now),
    });
  }
  return out.sort((a, b) => a.until - b.until || a.connectionName.localeCompare(b.connectionName) || a.id.localeCompare(b.id));
}

/** A row's countdown: "1:58" while it runs, "expired" once it reaches zero (the next refresh drops it). */
export function leaseCountdown(row: Pick<LeaseRow, 'until' | 'state'>, now: number): { text: string; expired: boolean } {
  const left = row.until - now;
  if (left <= 0 || row.state === 'expired' || row.state === 'released') return { text: 'expired', expired: true };
  return { text: formatCountdown(left), expired: false };
}

/** Rows still held at `now` (what a refresh keeps). */
export function activeLeases(rows: readonly LeaseRow[], now: number): LeaseRow[] {
  return rows.filter((r) => !leaseCountdown(r, now).expired);
}

/** "1 active lease", "3 active leases". */
export function leaseCountText(n: number): string {
  return n === 0 ? 'No active lease' : `${n} active lease${n === 1 ? '' : 's'}`;
}

/** The active lease count of the health payload (`leases.active`); null when absent. */
export function activeLeaseCount(health: unknown): number | null {
  const l = (health as { leases?: { active?: unknown } } | null | undefined)?.leases;
  const n = l && typeof l === 'object' ? l.active : undefined;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : null;
}
