import { describe, expect, it } from 'vitest';
import { importSource, meters, needsReimport, wallLines } from '../../src/lib/subscription';

const now = new Date('2026-01-01T12:00:00');

describe('meters', () => {
  it('shows the 5-hour and weekly windows in whole percent', () => {
    const m = meters({ quota: { fiveHour: { utilization: 0.424 }, weekly: { utilization: 1.2 } } }, now);
    expect(m.map((x) => [x.label, x.percent])).toEqual([
      ['5h', 42],
      ['week', 100],
    ]);
    expect(m[0]!.text).toBe('5h 42%');
  });
  it('skips unknown windows and connections never reported', () => {
    expect(meters({ quota: { fiveHour: null, weekly: { utilization: 0.1 } } }, now)).toHaveLength(1);
    expect(meters({}, now)).toEqual([]);
  });
  it('shows a Gemini CLI login\'s daily model quota with its model', () => {
    const m = meters({ quota: { fiveHour: null, weekly: null, daily: { utilization: 0.25 }, dailyModel: 'gemini-2.5-pro' } }, now);
    expect(m.map((x) => [x.label, x.percent])).toEqual([['day (gemini-2.5-pro)', 25]]);
  });
  it('names the reset time', () => {
    const [m] = meters({ quota: { fiveHour: { utilization: 0.5, resetsAt: new Date('2026-01-01T14:05:00').toISOString() } } }, now);
    expect(m!.text).toMatch(/^5h 50% · resets \d{2}.05/);
  });
});

describe('wallLines', () => {
  it('describes the lane and the reset', () => {
    const lines = wallLines(
      { inLane: true, laneUntil: new Date('2026-01-01T14:05:00').toISOString(), resetResult: 'reset', resetNextAt: new Date('2026-01-06T09:00:00').toISOString() },
      now,
    );
    expect(lines[0]).toMatch(/^slow lane until \d{1,2}.05/);
    expect(lines[1]).toMatch(/^reset used, next \S+ \d{1,2}.00/);
  });
  it('is empty without state', () => {
    expect(wallLines(undefined, now)).toEqual([]);
    expect(wallLines({ inLane: false }, now)).toEqual([]);
  });
  it('shows a cool-off and a failed reset back-off', () => {
    const lines = wallLines({ coolOffUntil: new Date('2026-01-01T12:10:00').toISOString(), resetResult: 'failed', resetBackoffUntil: new Date('2026-01-01T12:15:00').toISOString() }, now);
    expect(lines[0]).toMatch(/^slow lane cooling off until/);
    expect(lines[1]).toMatch(/^reset failed, retry after/);
  });
});

describe('re-import', () => {
  it('offers a re-import only for an expired OAuth connection', () => {
    expect(needsReimport({ authType: 'oauth', testStatus: 'expired' })).toBe(true);
    expect(needsReimport({ authType: 'oauth', testStatus: 'active' })).toBe(false);
    expect(needsReimport({ authType: 'apikey', testStatus: 'expired' })).toBe(false);
    expect(importSource({ providerSpecificData: { importedFrom: 'codex' } })).toBe('codex');
    expect(importSource({ providerSpecificData: {} })).toBeUndefined();
  });
});
