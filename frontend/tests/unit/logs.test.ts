import { describe, expect, it } from 'vitest';
import { EXCLUSION_TEXT, LOG_RANGES, matchesFilter, rangeFrom, rowTime, timelineSpans } from '../../src/views/logs';

describe('logs helpers', () => {
  it('places attempts on the request timeline by start and duration', () => {
    const spans = timelineSpans([
      { startMs: 0, latencyMs: 100 },
      { startMs: 100, latencyMs: 300, verdict: 'wait' },
      { startMs: 400, latencyMs: 0 },
    ]);
    expect(spans.map((s) => Math.round(s.left))).toEqual([0, 25, 100]);
    expect(spans.map((s) => Math.round(s.width * 10) / 10)).toEqual([25, 75, 0.8]);
  });
  it('filters live rows like the server does', () => {
    expect(matchesFilter({ connectionId: 'a', model: 'm' }, {})).toBe(true);
    expect(matchesFilter({ connectionId: 'a', model: 'm' }, { connectionId: 'a', model: 'm' })).toBe(true);
    expect(matchesFilter({ connectionId: 'a', model: 'm' }, { connectionId: 'b' })).toBe(false);
    expect(matchesFilter({ connectionId: 'a', model: 'm' }, { model: 'x' })).toBe(false);
  });
  it('names every exclusion reason the gateway writes', () => {
    for (const r of ['model_lockout', 'circuit_open', 'connection_cooldown', 'provider_cooldown', 'unavailable', 'lease_held']) {
      expect(EXCLUSION_TEXT[r]).toBeTruthy();
    }
  });
  it('turns a time range into from=, everything kept into none', () => {
    const now = Date.parse('2026-12-04T12:00:00Z');
    expect(rangeFrom('hour', now)).toBe('2026-12-04T11:00:00.000Z');
    expect(rangeFrom('15m', now)).toBe('2026-12-04T11:45:00.000Z');
    expect(rangeFrom('all', now)).toBe('');
    expect(rangeFrom('bogus', now)).toBe('');
    expect(LOG_RANGES[0]!.value).toBe('all');
  });
  it('shows and orders by the time a request finished', () => {
    expect(rowTime({ finishedAt: '2026-12-04T12:00:02Z', createdAt: '2026-12-04T12:00:00Z' })).toBe('2026-12-04T12:00:02Z');
    expect(rowTime({ createdAt: '2026-12-04T12:00:00Z', latencyMs: 2300 })).toBe('2026-12-04T12:00:02.300Z');
    expect(rowTime({})).toBeNull();
  });
});
