import { describe, expect, it } from 'vitest';
import { columnTotals, linePoints, niceMax, segmentSpan, stackedBars } from '../../src/lib/charts';
import { backIn, HealthStore, problems, stateBadge, statusLine, type HealthReport } from '../../src/lib/healthmodel';

const NOW = Date.parse('2026-12-03T13:00:00Z');
const at = (ms: number) => new Date(NOW + ms).toISOString();

const report: HealthReport = {
  status: 'degraded',
  summary: { status: 'degraded', serving: 2, total: 5, nextName: 'Work', nextBack: at(14 * 60_000), locks: 3 },
  connections: [
    { id: 'w', name: 'Work', provider: 'openai', providerName: 'OpenAI', state: 'cooling', serving: false, reason: 'rate limit', until: at(14 * 60_000), fixes: ['clear_cooldown'] },
    { id: 'l', name: 'Lab', provider: 'openai-compatible:lab', providerName: 'lab', state: 'breaker_open', serving: false, reason: 'open', until: at(30_000), fixes: ['reset_breaker'] },
    { id: 'p', name: 'Personal', provider: 'openai', state: 'models_locked', serving: true, locks: [{ model: 'm1', until: at(60_000) }], fixes: ['unlock_models'] },
    { id: 'x', name: 'Leased', provider: 'openai', state: 'leased', serving: true },
    { id: 's', name: 'Spare', provider: 'openai', state: 'serving', serving: true },
  ],
  providers: [{ id: 'gone', name: 'Gone', state: 'breaker_open', until: at(5_000) }],
  combos: [{ name: 'work', state: 'dead', reason: 'no target' }, { name: 'fine', state: 'serving' }],
};

describe('health model in the dashboard', () => {
  it('never calls a breaker-open, cooling, locked or leased connection healthy', () => {
    for (const s of ['breaker_open', 'cooling', 'models_locked', 'leased', 'terminal', 'disabled', 'dead', 'setup']) {
      expect(stateBadge(s).label).not.toBe('Healthy');
    }
    expect(stateBadge('serving')).toEqual({ label: 'Healthy', tone: 'ok' });
    expect(stateBadge('breaker_open').tone).toBe('bad');
    expect(stateBadge('setup').tone).toBe('muted');
  });
  it('lists what is not serving, worst first: breakers, cooldowns, dead combos, locks', () => {
    const list = problems(report);
    expect(list.map((p) => `${p.kind}:${p.name}`)).toEqual(['provider:Gone', 'connection:Lab', 'connection:Work', 'combo:work', 'connection:Personal']);
    expect(list.find((p) => p.name === 'Personal')?.down).toBe(false);
    expect(list.find((p) => p.name === 'Lab')?.fixes).toEqual(['reset_breaker']);
  });
  it('says when things are back in human units, like the tray', () => {
    expect(backIn(at(14 * 60_000), NOW)).toBe('back in 14 min');
    expect(backIn(at(1500), NOW)).toBe('back in 2 s');
    expect(backIn(at(-1), NOW)).toBe('back any moment');
    expect(backIn(undefined, NOW)).toBe('');
    expect(statusLine(report, NOW)).toBe('2 of 5 connections serving · Work back in 14 min');
    expect(statusLine({ summary: { status: 'setup', serving: 0, total: 0 } }, NOW)).toBe('Set up: add a provider connection');
    expect(statusLine({ summary: { status: 'healthy', serving: 3, total: 3 } }, NOW)).toBe('All 3 connections serving');
  });
  it('the store keeps the last report with a model and tells subscribers', () => {
    const store = new HealthStore();
    const seen: string[] = [];
    const off = store.subscribe((r) => seen.push(r.status ?? ''));
    store.set({ status: 'healthy' }); // anonymous payload: no model, ignored
    store.set(report);
    expect(seen).toEqual(['degraded']);
    expect(store.connection('l')?.state).toBe('breaker_open');
    off();
    store.set({ ...report, status: 'healthy' });
    expect(seen).toEqual(['degraded']);
  });
});

describe('chart geometry', () => {
  it('rounds axes up to 1, 2, 2.5, 5 × 10^n', () => {
    expect([0, 1, 3, 21, 240, 251, 999].map(niceMax)).toEqual([1, 1, 5, 25, 250, 500, 1000]);
  });
  it('stacks bars bottom-up and skips zeros', () => {
    expect(columnTotals([[1, 0, 2], [1, 3]])).toEqual([2, 3, 2]);
    const rects = stackedBars([[1, 0], [1, 2]], 100, 50, 4);
    expect(rects).toHaveLength(3);
    const col0 = rects.filter((r) => r.index === 0);
    expect(col0.map((r) => [r.y, r.h])).toEqual([[37.5, 12.5], [25, 12.5]]);
  });
  it('lines skip empty buckets; timeline spans clip to the window', () => {
    expect(linePoints([0, 2, 0, 4], 30, 10, 4)).toBe('10,5 30,0');
    expect(segmentSpan(50, 150, 100, 200)).toEqual({ left: 0, width: 0.5 });
    expect(segmentSpan(10, 20, 100, 200)).toBeNull();
  });
});
