// The team server's instance list (GET /api/instances): several gateway
// instances sharing one PostgreSQL database, each with a heartbeat.

import { formatAgo } from './format';

export interface Instance {
  name: string;
  version: string;
  address: string;
  startedAt: string;
  lastSeen: string;
  live: boolean;
  self: boolean;
}

export interface InstanceList {
  /** Other instances may share the database (PostgreSQL); false on a desktop. */
  shared: boolean;
  /** The name of the instance that answered. */
  self: string;
  instances: Instance[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Normalises an answer of GET /api/instances (unknown fields dropped, bad rows skipped). */
export function parseInstances(data: unknown): InstanceList {
  const d = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  const rows = Array.isArray(d.instances) ? d.instances : [];
  const instances: Instance[] = [];
  for (const r of rows) {
    if (!r || typeof r !== 'object') continue;
    const o = r as Record<string, unknown>;
    const name = str(o.name);
    if (!name) continue;
    instances.push({
      name,
      version: str(o.version),
      address: str(o.address),
      startedAt: str(o.startedAt),
      lastSeen: str(o.lastSeen),
      live: o.live === true,
      self: o.self === true,
    });
  }
  return { shared: d.shared === true, self: str(d.self), instances };
}

/** "2 of 3 instances live" (or "1 instance live"). */
export function instancesSummary(list: InstanceList): string {
  const live = list.instances.filter((i) => i.live).length;
  const total = list.instances.length;
  if (total === live) return `${live} instance${live === 1 ? '' : 's'} live`;
  return `${live} of ${total} instances live`;
}

/** One line per instance: its name, whether it is this one, and when it was last seen. */
export function instanceLine(i: Instance, now = Date.now()): string {
  const parts = [i.name];
  if (i.self) parts.push('(this one)');
  parts.push(i.live ? 'live' : `gone, last seen ${formatAgo(i.lastSeen, now)}`);
  if (i.version) parts.push(`v${i.version}`);
  return parts.join(' · ');
}
