import { describe, expect, it } from 'vitest';
import { columnTotals, linePoints, niceMax, segmentSpan, stackedBars } from '../../src/lib/charts';
import { backIn, HealthStore, problems, stateBadge, statusLine, type HealthReport } from '../../src/lib/healthmodel';
import { FIX_LABEL, planFix } from '../../src/lib/fixes';

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
  it('names a base URL answering 404 and offers its edit, never healthy (issue 42)', () => {
    expect(stateBadge('endpoint_not_found')).toEqual({ label: 'Wrong base URL', tone: 'bad' });
    const r: HealthReport = {
      status: 'unhealthy',
      summary: { status: 'unhealthy', serving: 0, total: 1 },
      connections: [{ id: 'c1', name: 'No v1', state: 'endpoint_not_found', reason: 'this URL answers 404: check the base URL', serving: false, fixes: ['edit_connection'] }],
      combos: [],
    } as unknown as HealthReport;
    const p = problems(r);
    expect(p.map((x) => x.state)).toEqual(['endpoint_not_found']);
    expect(planFix('edit_connection', { id: 'c1', name: 'No v1' })).not.toBeNull();
  });
  it('lists what is not serving, worst first: breakers, cooldowns, dead combos, locks', () => {
    const list = problems(report);
    expect(list.map((p) => `${p.kind}:${p.name}`)).toEqual(['provider:Gone', 'connection:Lab', 'connection:Work', 'combo:work', 'connection:Personal']);
    expect(list.find((p) => p.name === 'Personal')?.down).toBe(false);
    expect(list.find((p) => p.name === 'Lab')?.fixes).toEqual(['reset_breaker']);
  });
  it('a connection leased by another key and a rejected key are not serving, with their fixes', () => {
    const r = {
      summary: { status: 'degraded', serving: 1, total: 3 },
      connections: [
        { id: 'h', name: 'Held', provider: 'openai', state: 'leased', serving: false, leasedBy: 'CI key', leaseId: 'L1', until: at(60_000), fixes: ['release_lease'] },
        { id: 'k', name: 'Wrong', provider: 'openai', state: 'key_rejected', serving: false, reason: 'the provider rejected this key', fixes: ['replace_key'] },
        { id: 'm', name: 'Mine', provider: 'openai', state: 'leased', serving: true },
      ],
      combos: [{ name: 'dead', state: 'dead', targets: [{ model: 'm1', serving: false, reason: 'Held: held exclusively by CI key', connections: [{ id: 'h', name: 'Held', state: 'leased', fixes: ['release_lease'] }] }] }],
    };
    const list = problems(r);
    expect(list.map((p) => `${p.kind}:${p.name}:${p.state}`)).toEqual(['connection:Wrong:key_rejected', 'combo:dead:dead', 'connection:Held:leased']);
    expect(list.find((p) => p.name === 'Held')).toMatchObject({ leaseId: 'L1', leasedBy: 'CI key', fixes: ['release_lease'], down: true });
    expect(list.find((p) => p.kind === 'combo')?.targets?.[0]?.connections?.[0]?.fixes).toEqual(['release_lease']);
    expect(stateBadge('key_rejected')).toEqual({ label: 'Key rejected', tone: 'bad' });
    expect(stateBadge('leased').tone).not.toBe('ok');
  });
  it('every fix the health model names has one label and one action', () => {
    const t = { id: 'c1', name: 'Work', providerId: 'openai-compatible:lab', locks: [{ model: 'm1' }], leaseId: 'L1' };
    for (const f of ['reset_breaker', 'clear_cooldown', 'unlock_models', 'release_lease', 'replace_key', 'enable', 'edit_connection', 'set_price']) {
      expect(FIX_LABEL[f]).toBeTruthy();
      expect(planFix(f, t)).not.toBeNull();
    }
    expect(planFix('reset_breaker', t)).toEqual({ kind: 'reset_breaker', provider: 'openai-compatible:lab' });
    expect(planFix('unlock_models', t)).toEqual({ kind: 'unlock_models', targets: [{ provider: 'openai-compatible', connectionId: 'c1', model: 'm1' }] });
    expect(planFix('release_lease', t)).toEqual({ kind: 'release_lease', leaseId: 'L1' });
    expect(planFix('replace_key', t)).toEqual({ kind: 'link', href: '/connections', params: { edit: 'c1', field: 'apiKey' } });
    expect(planFix('release_lease', { id: 'c1', name: 'Work' })).toBeNull(); // no lease id: nothing to release
    expect(planFix('bogus', t)).toBeNull();
    // MODEL_PRICE_UNKNOWN's fix opens the Connections page's pricing editor on the model.
    expect(planFix('set_price', { ...t, model: 'local-llama' })).toEqual({ kind: 'link', href: '/connections', params: { price: 'c1', model: 'local-llama' } });
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

describe('Overview connection tiles (issue 42)', () => {
  it('count every connection not serving in exactly one tile, so the tiles add up on a mixed state', async () => {
    const { connectionCounts } = await import('../../src/lib/healthmodel');
    const conns = [
      { state: 'serving', serving: true },
      { state: 'degraded', serving: true },
      { state: 'models_locked', serving: true },
      { state: 'cooling', serving: false },
      { state: 'breaker_open', serving: false },
      { state: 'unreachable', serving: false },
      { state: 'key_rejected', serving: false },
      { state: 'endpoint_not_found', serving: false },
      { state: 'terminal', serving: false },
      { state: 'disabled', serving: false },
      { state: 'leased', serving: false },
    ] as const;
    const n = connectionCounts(conns);
    expect(n).toEqual({ total: 11, serving: 3, cooling: 1, breakerOpen: 1, outOfService: 6 });
    expect(n.serving + n.cooling + n.breakerOpen + n.outOfService).toBe(n.total);
    expect(connectionCounts(undefined)).toEqual({ total: 0, serving: 0, cooling: 0, breakerOpen: 0, outOfService: 0 });
  });
});
