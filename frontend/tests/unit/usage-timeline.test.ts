import { describe, expect, it } from 'vitest';
import { axisLabel, segmentLabel, yTicks } from '../../src/views/usage';

describe('segmentLabel', () => {
  it.each([
    [{ kind: 'breaker', state: 'OPEN' }, 'breaker OPEN'],
    [{ kind: 'cooldown', state: 'cooling_down', connection: 'work' }, 'work cooling down'],
    [{ kind: 'model_lock', state: 'locked', connection: 'work' }, 'work: models locked'],
    [{ kind: 'model_lock', state: 'locked' }, 'connection: models locked'],
  ])('%o → %s', (seg, want) => {
    expect(segmentLabel(seg)).toBe(want);
  });
});


describe('usage axes', () => {
  it('labels a y axis with max, half and 0', () => {
    expect(yTicks(1200)).toEqual(['1.2k', '600', '0']);
    expect(yTicks(0)).toEqual(['0']);
    expect(yTicks(3000, (n) => `${n} ms`)).toEqual(['3000 ms', '1500 ms', '0']);
  });
  it('puts dates on an axis that crosses midnight, times of day otherwise', () => {
    const from = new Date(2026, 11, 1, 10, 0).getTime();
    const sameDay = axisLabel(from, from, new Date(2026, 11, 1, 11, 0).getTime());
    const week = axisLabel(from, from, new Date(2026, 11, 8, 10, 0).getTime());
    expect(sameDay).not.toMatch(/Dec/);
    expect(week).toMatch(/Dec|12/);
    expect(week.length).toBeGreaterThan(sameDay.length);
  });
});
