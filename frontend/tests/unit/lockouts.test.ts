import { describe, expect, it } from 'vitest';
import { applyLockoutEvent, deadlineOf, expireLockouts, lockoutCountText, lockoutKey, lockoutReason, scopeInfo, toLockoutRows, type LockoutItem } from '../../src/lib/lockouts';
import { describeEvent, parseLiveEvent } from '../../src/lib/sse';

const NOW = 1_700_000_000_000;
const item = (model: string, remainingMs: number, extra: Partial<LockoutItem> = {}): LockoutItem => ({
  provider: 'openai-compatible',
  connectionId: 'c1',
  connectionName: 'Fake A',
  model,
  scope: 'model',
  reason: 'MODEL_NOT_FOUND',
  status: 404,
  failureCount: 1,
  remainingMs,
  expiresAt: new Date(NOW + remainingMs).toISOString(),
  ...extra,
});

describe('lockout rows', () => {
  it('take the deadline from remainingMs (browser clock), else from expiresAt', () => {
    expect(deadlineOf({ remainingMs: 5000, expiresAt: '2000-01-01T00:00:00Z' }, NOW)).toBe(NOW + 5000);
    expect(deadlineOf({ expiresAt: new Date(NOW + 7000).toISOString() }, NOW)).toBe(NOW + 7000);
    expect(deadlineOf({}, NOW)).toBe(NOW);
  });

  it('drop items already over, repeat keys and malformed items; sort by connection then model', () => {
    const rows = toLockoutRows(
      [item('gpt-4o-mini', 3000), item('gpt-4o', 60_000), item('gpt-4o', 90_000), item('o3', 0), { bad: true } as unknown as LockoutItem],
      NOW,
    );
    expect(rows.map((r) => [r.model, r.until - NOW])).toEqual([
      ['gpt-4o', 90_000],
      ['gpt-4o-mini', 3000],
    ]);
    expect(rows[0]!.key).toBe(lockoutKey({ provider: 'openai-compatible', connectionId: 'c1', model: 'gpt-4o', scope: 'model' }));
  });

  it('expire when the countdown reaches zero', () => {
    const rows = toLockoutRows([item('a', 1000), item('b', 2500)], NOW);
    expect(expireLockouts(rows, NOW + 999).expired).toHaveLength(0);
    const { live, expired } = expireLockouts(rows, NOW + 1000);
    expect(expired.map((r) => r.model)).toEqual(['a']);
    expect(live.map((r) => r.model)).toEqual(['b']);
    expect(expireLockouts(rows, NOW + 3000).live).toHaveLength(0);
  });
});

describe('applyLockoutEvent', () => {
  const base = toLockoutRows([item('gpt-4o', 60_000)], NOW);
  const ev = { provider: 'openai-compatible', connectionId: 'c1', model: 'gpt-4o', scope: 'model' };

  it('"locked" adds a new row (and asks for a fetch to fill the reason)', () => {
    const res = applyLockoutEvent([], { ...ev, action: 'locked', remainingMs: 120_000, failureCount: 1 }, NOW, new Map([['c1', 'Fake A']]));
    expect(res).toMatchObject({ changed: true, refetch: true });
    expect(res.rows[0]).toMatchObject({ model: 'gpt-4o', connectionName: 'Fake A', scope: 'model', until: NOW + 120_000 });
  });

  it('"locked" again updates the deadline and failure count in place', () => {
    const res = applyLockoutEvent(base, { ...ev, action: 'locked', remainingMs: 240_000, failureCount: 2 }, NOW + 1000);
    expect(res.refetch).toBe(false);
    expect(res.rows).toHaveLength(1);
    expect(res.rows[0]).toMatchObject({ until: NOW + 241_000, failureCount: 2, reason: 'MODEL_NOT_FOUND' });
  });

  it('"cleared" removes every scope of that model; an unknown row changes nothing', () => {
    const two = toLockoutRows([item('gpt-4o', 60_000), item('gpt-4o', 30_000, { scope: 'exact' }), item('o3', 1000)], NOW);
    expect(two).toHaveLength(3);
    expect(applyLockoutEvent(two, { ...ev, action: 'cleared', removed: 2 }, NOW)).toMatchObject({ changed: true, refetch: false });
    expect(applyLockoutEvent(two, { ...ev, action: 'cleared' }, NOW).rows.map((r) => r.model)).toEqual(['o3']);
    expect(applyLockoutEvent(base, { ...ev, model: 'other', action: 'cleared' }, NOW)).toMatchObject({ changed: false, refetch: false });
  });

  it('a bulk clear, a decay or an unknown action asks for a fetch instead of guessing', () => {
    expect(applyLockoutEvent(base, { action: 'cleared', removed: 3 }, NOW)).toMatchObject({ changed: false, refetch: true });
    expect(applyLockoutEvent(base, { ...ev, action: 'cleared', removed: 2 }, NOW)).toMatchObject({ changed: true, refetch: true });
    expect(applyLockoutEvent(base, { ...ev, scope: '', action: 'decayed', remainingMs: 0 }, NOW)).toMatchObject({ changed: false, refetch: true });
    expect(applyLockoutEvent(base, { ...ev, action: 'frozen' }, NOW)).toMatchObject({ changed: false, refetch: true });
  });
});

describe('lockout display', () => {
  it('names scopes and counts', () => {
    expect(scopeInfo('quota_family').label).toBe('quota family');
    expect(scopeInfo('model').label).toBe('model');
    // Words, never a raw code or an HTTP status (issue 42 item 8).
    expect(lockoutReason({ reason: 'MODEL_NOT_FOUND', status: 404 })).toBe('Model not found');
    expect(lockoutReason({ reason: 'timeout', status: 0 })).toBe('Timeout · no answer from the provider');
    expect(lockoutCountText([])).toBe('No model is locked');
    expect(lockoutCountText(toLockoutRows([item('a', 1000), item('b', 1000, { connectionId: 'c2' })], NOW))).toBe('2 models locked on 2 connections');
  });

  it('parses and describes live lockout events', () => {
    const raw = JSON.stringify({ id: 9, type: 'lockout', at: 'x', data: { action: 'locked', provider: 'openai-compatible', connectionId: 'c1', model: 'gpt-4o', scope: 'model', remainingMs: 120000, failureCount: 1 } });
    const ev = parseLiveEvent('lockout', raw)!;
    expect(ev.type).toBe('lockout');
    expect(describeEvent(ev, new Map([['c1', 'Fake A']]))).toMatchObject({ title: 'gpt-4o locked on Fake A for 2 min', tone: 'warn' });
    const bulk = parseLiveEvent('lockout', '{"id":3,"type":"lockout","at":"x","data":{"action":"cleared","removed":2}}')!;
    expect(describeEvent(bulk).title).toBe('2 model lockouts cleared');
    expect(parseLiveEvent('lockout', '{"data":{"model":"gpt-4o"}}')).toBeNull();
  });
});
