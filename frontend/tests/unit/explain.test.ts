import { describe, expect, it } from 'vitest';
import type { ConnectionRef } from '../../src/lib/combos';
import { explainModel, reasonInfo, targetBadges, type ExplainAnswer, type ExplainCandidate } from '../../src/lib/explain';

const NOW = 1_700_000_000_000;
const CONNS: ConnectionRef[] = [
  { id: 'ca', provider: 'openai-compatible', name: 'A', prefix: 'a', models: ['m'] },
  { id: 'cb', provider: 'openai-compatible', name: 'B', prefix: 'b', models: ['m'] },
  { id: 'cc', provider: 'openai-compatible', name: 'C', prefix: 'c', models: ['m'] },
];
const TARGETS = [{ model: 'a/m' }, { model: 'b/m' }, { model: 'c/m' }];

const eligible = (id: string, order: number): ExplainCandidate => ({
  order,
  status: 'eligible',
  connectionId: id,
  connectionName: id.toUpperCase().slice(1),
  provider: `openai-compatible:${id.slice(1)}`,
  model: 'm',
  reason: order === 1 ? 'first in order: would be tried first' : 'fallback if the ones above fail',
  remainingMs: 0,
});
const excluded = (id: string, reason: string, remainingMs: number, extra: Partial<ExplainCandidate> = {}): ExplainCandidate => ({
  order: null,
  status: 'excluded',
  connectionId: id,
  connectionName: id.toUpperCase().slice(1),
  provider: `openai-compatible:${id.slice(1)}`,
  model: 'm',
  reason,
  detail: '',
  transient: true,
  remainingMs,
  ...extra,
});
const answer = (candidates: ExplainCandidate[], extra: Partial<ExplainAnswer> = {}): ExplainAnswer => ({
  model: 'team',
  combo: { id: 'x', name: 'team', strategy: 'priority' },
  generatedAt: new Date(NOW).toISOString(),
  candidates,
  ...extra,
});

describe('reason badges', () => {
  it('name every exclusion reason with a tone', () => {
    expect(reasonInfo('connection_cooldown')).toMatchObject({ label: 'cooldown', tone: 'warn' });
    expect(reasonInfo('circuit_open')).toMatchObject({ label: 'breaker open', tone: 'bad' });
    expect(reasonInfo('model_lockout')).toMatchObject({ label: 'model locked', tone: 'warn' });
    expect(reasonInfo('model_cooldown')).toMatchObject({ label: 'model cooling', tone: 'warn' });
    expect(reasonInfo('connection_failed')).toMatchObject({ label: 'account failed', tone: 'warn' });
    expect(reasonInfo('provider_cooldown')).toMatchObject({ label: 'provider cooldown', tone: 'warn' });
    expect(reasonInfo('lease_held')).toMatchObject({ label: 'leased', tone: 'muted' });
    expect(reasonInfo('unavailable', 'credits_exhausted')).toMatchObject({ label: 'unavailable: credits exhausted', tone: 'bad' });
    expect(reasonInfo('unavailable').label).toBe('unavailable');
    expect(reasonInfo('something_new')).toMatchObject({ label: 'something new', tone: 'muted' });
  });
});

describe('explain model', () => {
  it('lists eligible candidates by order first, then the excluded ones by target, with deadlines', () => {
    const m = explainModel(
      answer([excluded('cc', 'circuit_open', 30_000), eligible('cb', 2), excluded('ca', 'connection_cooldown', 119_000), eligible('cx', 1)]),
      NOW,
      TARGETS,
      CONNS,
    );
    expect(m.eligible.map((r) => [r.connectionId, r.order])).toEqual([
      ['cx', 1],
      ['cb', 2],
    ]);
    expect(m.excluded.map((r) => [r.targetLabel, r.reason, r.until! - NOW])).toEqual([
      ['a/m', 'connection_cooldown', 119_000],
      ['c/m', 'circuit_open', 30_000],
    ]);
    expect(m.excluded[0]!.info).toMatchObject({ label: 'cooldown', tone: 'warn' });
    expect(m.eligible[1]).toMatchObject({ targetLabel: 'b/m', providerLabel: 'openai-compatible', info: null, until: null });
    expect(m.eligible[0]!.targetLabel).toBe('m'); // an unknown connection: the upstream model
    expect(m.summary).toMatch(/first, then 1 fallback; 2 of 4 excluded\.$/);
  });

  it('has no countdown for an exclusion without a timer', () => {
    const m = explainModel(answer([excluded('ca', 'unavailable', 0, { detail: 'banned', transient: false })]), NOW, TARGETS, CONNS);
    expect(m.excluded[0]!.until).toBeNull();
    expect(m.summary).toBe('Every candidate is excluded and none recovers by itself.');
  });

  it('says when the first excluded candidate is back, and passes errors through', () => {
    const m = explainModel(answer([excluded('ca', 'connection_cooldown', 119_400), excluded('cb', 'circuit_open', 30_000)]), NOW, TARGETS, CONNS);
    expect(m.summary).toBe('Every candidate is excluded right now; the first is back in 30 s.');
    const e = explainModel(answer([], { error: { code: 'no_executable_targets', message: 'combo "x" has no executable target' } }), NOW);
    expect(e.error).toEqual({ code: 'no_executable_targets', message: 'combo "x" has no executable target' });
    expect(e.summary).toMatch(/^A request would fail: combo "x"/);
    expect(explainModel(null, NOW)).toMatchObject({ eligible: [], excluded: [], error: null, summary: 'No connection serves this model.' });
  });
});

describe('editor target badges', () => {
  it('show the live exclusions of the target’s model with their countdowns', () => {
    const a = answer([excluded('ca', 'connection_cooldown', 60_000)], { model: 'a/m', combo: null });
    expect(targetBadges(a, '', NOW)).toEqual([
      expect.objectContaining({ label: 'cooldown', tone: 'warn', reason: 'connection_cooldown', until: NOW + 60_000 }),
    ]);
  });

  it('say "available" when something serves, with a count when there are several', () => {
    expect(targetBadges(answer([eligible('ca', 1)]), '', NOW).map((b) => b.label)).toEqual(['available']);
    const mixed = targetBadges(answer([eligible('ca', 1), excluded('cb', 'model_lockout', 5000)]), '', NOW);
    expect(mixed.map((b) => [b.label, b.tone])).toEqual([
      ['available 1/2', 'ok'],
      ['model locked', 'warn'],
    ]);
  });

  it('follow the pin, and say "no connection" when nothing can serve', () => {
    const both = answer([eligible('ca', 1), excluded('cb', 'circuit_open', 5000)]);
    expect(targetBadges(both, 'cb', NOW).map((b) => b.label)).toEqual(['breaker open']);
    expect(targetBadges(both, 'zz', NOW)).toEqual([expect.objectContaining({ label: 'no connection', tone: 'bad' })]);
    const missing = answer([], { error: { code: 'MODEL_NOT_FOUND', message: 'model "q" is not served' } });
    expect(targetBadges(missing, '', NOW)).toEqual([expect.objectContaining({ label: 'no connection', reason: 'MODEL_NOT_FOUND', title: 'model "q" is not served' })]);
    expect(targetBadges(null, '', NOW)).toEqual([]);
  });
});
