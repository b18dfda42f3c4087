import { describe, expect, it } from 'vitest';
import { EXCLUSION_TEXT, matchesFilter, timelineSpans } from '../../src/views/logs';

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
});
