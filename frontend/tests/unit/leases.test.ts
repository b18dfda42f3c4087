import { describe, expect, it } from 'vitest';
import { activeLeaseCount, activeLeases, leaseCountdown, leaseCountText, leaseDeadline, toLeaseRows, type LeaseItem } from '../../src/lib/leases';
import { describeEvent, parseLiveEvent } from '../../src/lib/sse';

const NOW = 1_700_000_000_000;
const lease = (id: string, remainingMs: number, extra: Partial<LeaseItem> = {}): LeaseItem => ({
  id,
  ownerHashPrefix: '3fa9c2d1e0b4',
  keyId: 'k1',
  keyName: 'agent key',
  connectionId: 'c1',
  connectionName: 'Fake A',
  provider: 'openai-compatible',
  model: 'a/m',
  generation: 1,
  state: 'active',
  acquiredAt: new Date(NOW - 30_000).toISOString(),
  renewedAt: new Date(NOW - 5_000).toISOString(),
  expiresAt: new Date(NOW + remainingMs).toISOString(),
  remainingMs,
  ...extra,
});

describe('lease rows', () => {
  it('take the deadline from remainingMs (browser clock), else from expiresAt', () => {
    expect(leaseDeadline({ remainingMs: 90_000, expiresAt: '2000-01-01T00:00:00Z' }, NOW)).toBe(NOW + 90_000);
    expect(leaseDeadline({ expiresAt: new Date(NOW + 7000).toISOString() }, NOW)).toBe(NOW + 7000);
    expect(leaseDeadline({ remainingMs: -5 }, NOW)).toBe(NOW);
  });

  it('keep only whitelisted fields: the owner is never more than a short hash prefix', () => {
    const leaky = { ...lease('l1', 60_000), ownerHashPrefix: 'a'.repeat(64), ownerHash: 'b'.repeat(64), owner: 'vlo_secret' } as LeaseItem;
    const [row] = toLeaseRows([leaky], NOW);
    expect(row!.ownerHashPrefix).toBe('a'.repeat(12));
    expect(JSON.stringify(row)).not.toContain('vlo_secret');
    expect(JSON.stringify(row)).not.toContain('b'.repeat(12));
    expect(row).toMatchObject({ keyName: 'agent key', connectionName: 'Fake A', generation: 1, state: 'active', until: NOW + 60_000 });
    expect(toLeaseRows([lease('l2', 1000, { state: 'ACTIVE' })], NOW)[0]!.state).toBe('active'); // the gateway writes capitals
  });

  it('sort soonest to expire first and drop malformed items', () => {
    const rows = toLeaseRows([lease('late', 100_000), lease('soon', 10_000), { bad: 1 } as unknown as LeaseItem, lease('', 5)], NOW);
    expect(rows.map((r) => r.id)).toEqual(['soon', 'late']);
  });
});

describe('lease countdown', () => {
  it('ticks, then says "expired" at zero; a refresh then drops the row', () => {
    const [row] = toLeaseRows([lease('l1', 2_500)], NOW);
    expect(leaseCountdown(row!, NOW)).toEqual({ text: '3 s', expired: false });
    expect(leaseCountdown(row!, NOW + 2_000)).toEqual({ text: '1 s', expired: false });
    expect(leaseCountdown(row!, NOW + 2_500)).toEqual({ text: 'expired', expired: true });
    expect(activeLeases([row!], NOW + 1_000)).toHaveLength(1);
    expect(activeLeases([row!], NOW + 3_000)).toHaveLength(0);
  });

  it('treats a released or expired state as over whatever the clock says', () => {
    const [row] = toLeaseRows([lease('l1', 60_000, { state: 'released' })], NOW);
    expect(leaseCountdown(row!, NOW).expired).toBe(true);
  });
});

describe('lease counts and events', () => {
  it('read the health payload and word the count', () => {
    expect(activeLeaseCount({ leases: { active: 2 } })).toBe(2);
    expect(activeLeaseCount({ leases: {} })).toBeNull();
    expect(activeLeaseCount({})).toBeNull();
    expect([leaseCountText(0), leaseCountText(1), leaseCountText(3)]).toEqual(['No active lease', '1 active lease', '3 active leases']);
  });

  it('parse `lease` events and describe them in the feed', () => {
    const ev = parseLiveEvent('lease', JSON.stringify({ id: 4, type: 'lease', at: 'x', data: { action: 'acquired', id: 'l1', connectionId: 'c1', generation: 1, active: 1 } }))!;
    expect(ev.type).toBe('lease');
    expect(describeEvent(ev, new Map([['c1', 'Fake A']]))).toEqual({ title: 'Lease acquired on Fake A', detail: '1 active', tone: 'ok' });
    const op = parseLiveEvent('lease', '{"id":5,"type":"lease","at":"x","data":{"action":"operator_released","id":"l1","connectionId":"c9","active":0}}')!;
    expect(describeEvent(op).title).toBe('Lease released by an operator on c9');
    expect(parseLiveEvent('lease', '{"id":1,"type":"lease","data":"nope"}')).toBeNull();
  });
});
