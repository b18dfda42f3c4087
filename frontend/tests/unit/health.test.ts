import { describe, expect, it } from 'vitest';
import { applyConnectionEvent, breakerBadge, connectionState, healthBadge, isTerminalStatus, providerLabel } from '../../src/lib/health';

describe('healthBadge', () => {
  it('maps the three statuses to tones', () => {
    expect(healthBadge('healthy')).toMatchObject({ label: 'Healthy', tone: 'ok' });
    expect(healthBadge('degraded')).toMatchObject({ label: 'Degraded', tone: 'warn' });
    expect(healthBadge('UNHEALTHY')).toMatchObject({ label: 'Unhealthy', tone: 'bad' });
  });
  it('paused is its own state, never "Requests are served"', () => {
    const b = healthBadge('paused');
    expect(b.label).toBe('Paused');
    expect(b.description).toContain('paused');
    expect(b.description).not.toContain('Requests are served');
  });
  it('does not hide unknown or missing statuses', () => {
    expect(healthBadge(undefined)).toMatchObject({ label: 'Unknown', tone: 'muted' });
    expect(healthBadge('starting')).toMatchObject({ label: 'Starting', tone: 'warn' });
  });
});

describe('breakerBadge', () => {
  it('maps breaker states', () => {
    expect(breakerBadge('CLOSED').tone).toBe('ok');
    expect(breakerBadge('HALF_OPEN')).toEqual({ label: 'Half-open', tone: 'warn' });
    expect(breakerBadge('open')).toEqual({ label: 'Open', tone: 'bad' });
    expect(breakerBadge(null).tone).toBe('muted');
  });
});

describe('connectionState', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('terminal states win and are bad', () => {
    expect(connectionState({ isActive: true, testStatus: 'banned' }, now)).toMatchObject({ kind: 'banned', label: 'Banned', tone: 'bad' });
    expect(connectionState({ isActive: true, testStatus: 'expired' }, now).label).toBe('Expired');
    expect(connectionState({ isActive: true, testStatus: 'credits_exhausted' }, now).label).toBe('Credits exhausted');
    expect(isTerminalStatus('credits_exhausted')).toBe(true);
    expect(connectionState({ isActive: true, testStatus: 'key_rejected' }, now)).toMatchObject({ kind: 'key_rejected', label: 'Key rejected', tone: 'bad' });
    expect(isTerminalStatus('unavailable')).toBe(false);
  });
  it('a future deadline is a cooldown with its deadline', () => {
    const s = connectionState({ isActive: true, testStatus: 'unavailable', rateLimitedUntil: '2026-01-01T00:02:00Z' }, now);
    expect(s.kind).toBe('cooling');
    expect(s.tone).toBe('warn');
    expect(s.until?.getTime()).toBe(now + 120_000);
  });
  it('a lapsed deadline is healthy again (lazy recovery)', () => {
    expect(connectionState({ isActive: true, testStatus: 'unavailable', rateLimitedUntil: '2025-12-31T23:59:59Z' }, now).kind).toBe('healthy');
  });
  it('disabled connections say so', () => {
    expect(connectionState({ isActive: false, testStatus: 'active' }, now)).toMatchObject({ kind: 'disabled', tone: 'muted' });
  });
});

describe('applyConnectionEvent', () => {
  const base = { id: 'c1', isActive: true, testStatus: 'active', rateLimitedUntil: null as string | null, backoffLevel: 0 };
  it('a cooling_down event sets the deadline and status', () => {
    const next = applyConnectionEvent(base, {
      id: 'c1',
      status: 'cooling_down',
      rateLimitedUntil: '2026-01-01T00:02:00Z',
      backoffLevel: 1,
      lastErrorType: 'rate_limit',
      errorCode: 'UPSTREAM_RATE_LIMITED',
      terminal: '',
    });
    expect(next).toMatchObject({ testStatus: 'unavailable', rateLimitedUntil: '2026-01-01T00:02:00Z', backoffLevel: 1, errorCode: 'UPSTREAM_RATE_LIMITED' });
    expect(base.testStatus).toBe('active'); // not mutated
  });
  it('healthy clears the deadline; terminal sets the terminal name', () => {
    expect(applyConnectionEvent({ ...base, rateLimitedUntil: 'x' }, { id: 'c1', status: 'healthy', rateLimitedUntil: null })).toMatchObject({
      testStatus: 'active',
      rateLimitedUntil: null,
    });
    expect(applyConnectionEvent(base, { id: 'c1', status: 'terminal', terminal: 'banned' }).testStatus).toBe('banned');
  });
});

describe('providerLabel', () => {
  it('names user-defined endpoints by their connection', () => {
    const names = new Map([['abc', 'Work proxy']]);
    expect(providerLabel('openai-compatible:abc', names)).toBe('Work proxy (openai-compatible)');
    expect(providerLabel('openai-compatible:zzz', names)).toBe('openai-compatible:zzz');
    expect(providerLabel('openai', names)).toBe('openai');
  });
});
