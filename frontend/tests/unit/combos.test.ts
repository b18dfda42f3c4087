import { describe, expect, it } from 'vitest';
import {
  draftFromCombo,
  emptyDraft,
  emptyTarget,
  fieldForComboError,
  hasExplicitPriorities,
  modelSuggestions,
  moveItem,
  pinMismatch,
  resolveTarget,
  strategyInfo,
  STRATEGIES,
  targetIndexOf,
  targetsSummary,
  usesField,
  validateCombo,
  type ComboDraft,
  type ConnectionRef,
} from '../../src/lib/combos';

const CONNS: ConnectionRef[] = [
  { id: 'ca', provider: 'openai-compatible', name: 'A', prefix: 'a', isActive: true, models: ['m'] },
  { id: 'cb', provider: 'openai-compatible', name: 'B', prefix: 'b', isActive: true, models: ['m'] },
  { id: 'co', provider: 'openai', name: 'OpenAI', prefix: null, isActive: true, models: ['gpt-4o-mini'] },
  { id: 'cx', provider: 'openai', name: 'Off', prefix: null, isActive: false, models: ['gpt-4o'] },
];

function draft(over: Partial<ComboDraft> = {}, models: string[] = ['a/m', 'b/m']): ComboDraft {
  return { ...emptyDraft(), name: 'team', targets: models.map((m) => emptyTarget(m)), ...over };
}

describe('strategies', () => {
  it('describe every gateway strategy in one line, with the fields each uses', () => {
    for (const s of STRATEGIES) {
      const info = strategyInfo(s);
      expect(info.description.length).toBeGreaterThan(20);
      expect(info.description).not.toContain('\n');
      expect(info.description, s).not.toMatch(/^The gateway’s/);
    }
    expect(STRATEGIES).toHaveLength(20);
    expect(usesField('quota-weighted', 'weight')).toBe(true);
    expect(usesField('weighted', 'weight')).toBe(true);
    expect(usesField('priority', 'weight')).toBe(false);
    expect(usesField('cost-optimized', 'costPer1M')).toBe(true);
    expect(usesField('context-optimized', 'contextWindow')).toBe(true);
    expect(usesField('context-optimized', 'costPer1M')).toBe(false);
    expect(strategyInfo('round-robin').sticky).toBe(true);
    expect(strategyInfo('priority').sticky).toBe(false);
    expect(strategyInfo('future-one')).toMatchObject({ fields: [], sticky: false, description: 'The gateway’s “future-one” strategy.' });
  });
});

describe('combo validation', () => {
  it('accepts a good draft and builds the body from it', () => {
    const { errors, body } = validateCombo(draft({ description: '  coding  ' }));
    expect(errors.size).toBe(0);
    expect(body).toEqual({
      name: 'team',
      strategy: 'priority',
      targets: [{ model: 'a/m' }, { model: 'b/m' }],
      description: 'coding',
      stickyTtlMs: 0,
      maxRetriesPerTarget: 1,
    });
  });

  it('checks the name pattern (a leading combo/ is dropped, as the gateway does)', () => {
    expect(validateCombo(draft({ name: 'combo/team' })).body?.name).toBe('team');
    expect(validateCombo(draft({ name: 'Team.v2:fast_1-x' })).errors.has('name')).toBe(false);
    expect(validateCombo(draft({ name: '' })).errors.get('name')).toBe('Enter a name.');
    for (const bad of ['-team', 'my team', 'team/x', 'a'.repeat(65), 'tëam']) {
      expect(validateCombo(draft({ name: bad })).errors.get('name'), bad).toMatch(/^Use 1–64 letters/);
    }
    expect(validateCombo(draft({ name: 'a'.repeat(64) })).errors.has('name')).toBe(false);
  });

  it('needs 1 to 100 targets, each with a model, no repeats', () => {
    expect(validateCombo(draft({}, [])).errors.get('targets')).toBe('Add at least one target.');
    const many = Array.from({ length: 101 }, (_, i) => `a/m${i}`);
    expect(validateCombo(draft({}, many)).errors.get('targets')).toMatch(/at most 100/);
    expect(validateCombo(draft({}, many.slice(0, 100))).errors.size).toBe(0);
    const res = validateCombo(draft({}, ['a/m', ' ', 'a/m', 'x y']));
    expect(res.errors.get('targets.1.model')).toMatch(/^Enter a model/);
    expect(res.errors.get('targets.2.model')).toBe('Same model as target 1.');
    expect(res.errors.get('targets.3.model')).toBe('A model name has no spaces.');
    expect(res.body).toBeNull();
  });

  it('checks weights 0–1000 for weighted only, and sends only the fields the strategy uses', () => {
    const d = draft({ strategy: 'weighted' });
    d.targets[0]!.weight = '0';
    d.targets[1]!.weight = '1001';
    expect(validateCombo(d).errors.get('targets.1.weight')).toMatch(/0–1000/);
    d.targets[1]!.weight = '2.5';
    expect(validateCombo(d).errors.has('targets.1.weight')).toBe(true);
    d.targets[1]!.weight = '1000';
    d.targets[1]!.costPer1M = '9'; // typed under another strategy: not sent
    expect(validateCombo(d).body?.targets).toEqual([{ model: 'a/m', weight: 0 }, { model: 'b/m', weight: 1000 }]);
    // Under priority the hidden weights are neither checked nor sent.
    d.strategy = 'priority';
    d.targets[1]!.weight = '99999';
    expect(validateCombo(d).body?.targets).toEqual([{ model: 'a/m' }, { model: 'b/m' }]);
  });

  it('checks cost, context window, retries and the round-robin sticky TTL (seconds → ms)', () => {
    const cost = draft({ strategy: 'cost-optimized' });
    cost.targets[0]!.costPer1M = '0.6';
    cost.targets[1]!.costPer1M = '-1';
    expect(validateCombo(cost).errors.has('targets.1.costPer1M')).toBe(true);
    const ctx = draft({ strategy: 'context-optimized' });
    ctx.targets[0]!.contextWindow = '128000';
    ctx.targets[1]!.contextWindow = '1e3';
    expect(validateCombo(ctx).body?.targets).toEqual([{ model: 'a/m', contextWindow: 128000 }, { model: 'b/m', contextWindow: 1000 }]);
    expect(validateCombo(draft({ maxRetries: '6' })).errors.get('maxRetries')).toBe('Enter a whole number 0–5.');
    expect(validateCombo(draft({ maxRetries: '' })).errors.has('maxRetries')).toBe(true);
    expect(validateCombo(draft({ maxRetries: '0' })).body?.maxRetriesPerTarget).toBe(0);
    expect(validateCombo(draft({ strategy: 'round-robin', stickyTtl: '1.5' })).body?.stickyTtlMs).toBe(1500);
    expect(validateCombo(draft({ strategy: 'round-robin', stickyTtl: '86401' })).errors.has('stickyTtl')).toBe(true);
    expect(validateCombo(draft({ strategy: 'priority', stickyTtl: 'junk' })).body?.stickyTtlMs).toBe(0); // hidden, not sent
  });

  it('rejects a strategy the gateway does not list', () => {
    expect(validateCombo(draft({ strategy: 'fastest' })).errors.get('strategy')).toMatch(/not a strategy/);
    expect(validateCombo(draft({ strategy: 'fastest' }), ['priority', 'fastest']).errors.has('strategy')).toBe(false);
  });
});

describe('target reorder', () => {
  it('moves one item up or down and reports where it went', () => {
    expect(moveItem(['a', 'b', 'c'], 2, -1)).toEqual({ list: ['a', 'c', 'b'], index: 1, moved: true });
    expect(moveItem(['a', 'b', 'c'], 0, 1)).toEqual({ list: ['b', 'a', 'c'], index: 1, moved: true });
  });

  it('does nothing past either end, and never mutates its input', () => {
    const list = ['a', 'b'];
    expect(moveItem(list, 0, -1)).toEqual({ list: ['a', 'b'], index: 0, moved: false });
    expect(moveItem(list, 1, 1)).toEqual({ list: ['a', 'b'], index: 1, moved: false });
    expect(moveItem(list, 5, -1).moved).toBe(false);
    const res = moveItem(list, 1, -1);
    expect(res.list).toEqual(['b', 'a']);
    expect(list).toEqual(['a', 'b']);
  });

  it('round-trips: down then up restores the order; the body follows the new order', () => {
    const d = draft();
    const once = moveItem(d.targets, 1, -1);
    expect(validateCombo({ ...d, targets: once.list }).body?.targets.map((t) => t.model)).toEqual(['b/m', 'a/m']);
    const back = moveItem(once.list, once.index, 1);
    expect(back.list.map((t) => t.key)).toEqual(d.targets.map((t) => t.key));
  });
});

describe('stored combos', () => {
  it('become drafts in their effective order (priority, then definition), in seconds', () => {
    const d = draftFromCombo({
      id: 'x',
      name: 'team',
      strategy: 'round-robin',
      targets: [{ model: 'a/m', priority: 2, weight: 3 }, { model: 'b/m', priority: 1, connectionId: 'cb' }, { model: 'c/m' }],
      stickyTtlMs: 90_000,
      maxRetriesPerTarget: null,
    });
    expect(d.targets.map((t) => t.model)).toEqual(['c/m', 'b/m', 'a/m']);
    expect(d.targets[1]).toMatchObject({ connectionId: 'cb', weight: '' });
    expect(d.targets[2]!.weight).toBe('3');
    expect([d.stickyTtl, d.maxRetries]).toEqual(['90', '1']);
    expect(new Set(d.targets.map((t) => t.key)).size).toBe(3);
    expect(hasExplicitPriorities({ targets: [{ model: 'a', priority: 2 }] })).toBe(true);
    expect(hasExplicitPriorities({ targets: [{ model: 'a' }, { model: 'b', priority: 0 }] })).toBe(false);
  });

  it('summarise their targets in one line', () => {
    expect(targetsSummary({ strategy: 'priority', targets: [{ model: 'a/m' }, { model: 'b/m' }] })).toBe('a/m → b/m');
    expect(targetsSummary({ strategy: 'weighted', targets: [{ model: 'a/m' }, { model: 'b/m' }] })).toBe('a/m, b/m');
    expect(targetsSummary({ strategy: 'random', targets: ['1', '2', '3', '4', '5', '6'].map((m) => ({ model: m })) })).toBe('1, 2, 3, 4 … (+2)');
  });
});

describe('server errors', () => {
  it('land on the field their param names; a target index in the message picks the row', () => {
    expect(fieldForComboError({ param: 'name', code: 'COMBO_NAME_TAKEN' })).toBe('name');
    expect(fieldForComboError({ param: 'strategy', code: 'INVALID_STRATEGY' })).toBe('strategy');
    expect(fieldForComboError({ param: 'stickyTtlMs' })).toBe('stickyTtl');
    expect(fieldForComboError({ param: 'maxRetriesPerTarget' })).toBe('maxRetries');
    expect(fieldForComboError({ param: 'targets', message: 'targets[1].weight must be 0 (fallback only) to 1000' })).toBe('targets.1.weight');
    expect(fieldForComboError({ param: 'targets', message: 'targets[0].connectionId names an unknown connection' })).toBe('targets.0.connectionId');
    expect(fieldForComboError({ param: 'targets', message: 'a combo needs 1 to 100 targets' })).toBe('targets');
    expect(fieldForComboError({ code: 'FIELDS_REQUIRED', message: 'name and targets are required' })).toBeUndefined();
  });
});

describe('target naming', () => {
  it('follows the gateway: prefix first, then provider, then bare model names; inactive connections never serve', () => {
    expect(resolveTarget('a/m', CONNS)).toEqual([{ connectionId: 'ca', model: 'm' }]);
    expect(resolveTarget('openai/gpt-4o-mini', CONNS)).toEqual([{ connectionId: 'co', model: 'gpt-4o-mini' }]);
    expect(resolveTarget('m', CONNS).map((r) => r.connectionId)).toEqual(['ca', 'cb']);
    expect(resolveTarget('gpt-4o', CONNS)).toEqual([]);
    expect(resolveTarget('z/m', CONNS)).toEqual([]);
  });

  it('map explain candidates back to the target that named them', () => {
    const targets = [{ model: 'a/m' }, { model: 'b/m' }];
    expect(targetIndexOf({ connectionId: 'cb', model: 'm' }, targets, CONNS)).toBe(1);
    expect(targetIndexOf({ connectionId: 'ca', model: 'm' }, targets, CONNS)).toBe(0);
    expect(targetIndexOf({ connectionId: 'ca', model: 'm' }, [{ model: 'm', connectionId: 'cb' }, { model: 'm' }], CONNS)).toBe(1);
    expect(targetIndexOf({ connectionId: 'zz', model: 'q' }, targets, CONNS)).toBe(-1);
    // A provider alias only the gateway resolves: matched by the upstream model name.
    expect(targetIndexOf({ connectionId: 'co', model: 'gpt-4o-mini' }, [{ model: 'a/m' }, { model: 'oai/gpt-4o-mini' }], CONNS)).toBe(1);
  });

  it('flag a pin to a connection that does not serve the model, and suggest models', () => {
    expect(pinMismatch({ model: 'a/m', connectionId: 'cb' }, CONNS)).toBe(true);
    expect(pinMismatch({ model: 'a/m', connectionId: 'ca' }, CONNS)).toBe(false);
    expect(pinMismatch({ model: 'a/m', connectionId: '' }, CONNS)).toBe(false);
    expect(modelSuggestions(CONNS)).toEqual(['a/m', 'b/m', 'openai/gpt-4o-mini']);
  });
});
