import { describe, expect, it } from 'vitest';
import { filterModels, hiddenModels, knownModels, modelAliases } from '../../src/lib/modelsearch';
import { describeChanges } from '../../src/views/backup';
import { describeManaged } from '../../src/views/connections';
import type { Connection } from '../../src/api';

describe('filterModels', () => {
  const names = ['gpt-4o', 'gpt-4o-mini', 'Claude-Sonnet-4-5', 'o3'];
  it.each([
    ['', names],
    ['  ', names],
    ['mini', ['gpt-4o-mini']],
    ['GPT 4O', ['gpt-4o', 'gpt-4o-mini']],
    ['sonnet 4', ['Claude-Sonnet-4-5']],
    ['nothing', []],
  ])('%j', (q, want) => {
    expect(filterModels(names, q)).toEqual(want);
  });
});

describe('connection model fields', () => {
  it('reads knownModels, hiddenModels and modelAliases, tolerating their absence', () => {
    const c = { id: 'c', provider: 'p', name: 'n', isActive: true, knownModels: ['a', 'b'], hiddenModels: ['b'], modelAliases: { fast: 'a', bad: 3 } } as Connection;
    expect(knownModels(c)).toEqual(['a', 'b']);
    expect(hiddenModels(c)).toEqual(['b']);
    expect(modelAliases(c)).toEqual({ fast: 'a' });
    const old = { id: 'c', provider: 'p', name: 'n', isActive: true, servedModels: ['x'] } as Connection;
    expect(knownModels(old)).toEqual(['x']);
    expect(hiddenModels(old)).toEqual([]);
    expect(modelAliases(old)).toEqual({});
  });
});

describe('describeChanges', () => {
  it('lists kinds in reading order with what each adds, changes and removes', () => {
    const lines = describeChanges({
      applied: false,
      backup: { createdAt: 't', schemaVersion: 11, withLog: false },
      changes: {
        settings: { added: [], changed: [], removed: [] },
        connections: { added: [{ id: 'c1', name: 'work' }], changed: [], removed: [{ id: 'c2' }] },
      },
    });
    expect(lines.map((l) => l.text)).toEqual(['connections: 1 added, 0 changed, 1 removed', 'settings: unchanged']);
    expect(lines[0]?.items).toEqual(['+ work (c1)', '− c2']);
  });
});

describe('describeManaged', () => {
  it('says what is hidden and aliased', () => {
    const c = { id: 'c', provider: 'p', name: 'n', isActive: true, hiddenModels: ['a', 'b'], modelAliases: { z: 'a', fast: 'gpt-4o' } } as Connection;
    expect(describeManaged(c)).toBe('2 hidden · aliases: fast → gpt-4o, z → a');
    expect(describeManaged({ id: 'c', provider: 'p', name: 'n', isActive: true } as Connection)).toBe('');
  });
});
