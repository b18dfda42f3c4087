import { describe, expect, it } from 'vitest';
import {
  SETTINGS,
  SETTING_GROUPS,
  describeSetting,
  entryFor,
  entryForParam,
  fromRawValue,
  settingAt,
  settingId,
  settingKeys,
  settingsPatch,
  toRawValue,
  unplacedKeys,
  type SettingEntry,
} from '../../src/lib/settings';

const entry = (key: string): SettingEntry => {
  const e = SETTINGS.find((s) => s.key === key);
  if (!e) throw new Error(`no entry ${key}`);
  return e;
};

describe('settings catalogue', () => {
  it('every entry has a known group and a default', () => {
    for (const e of SETTINGS) {
      expect(SETTING_GROUPS).toContain(e.group);
      expect(e.default).not.toBeUndefined();
      expect(e.description.length).toBeGreaterThan(20);
    }
  });

  it('a document of the defaults has every key placed; a new key is not', () => {
    const doc: Record<string, unknown> = {};
    for (const e of SETTINGS) {
      const parts = e.key.split('.');
      let cur = doc;
      for (const p of parts.slice(0, -1)) cur = (cur[p] ??= {}) as Record<string, unknown>;
      cur[parts[parts.length - 1]!] = e.default;
    }
    expect(unplacedKeys(doc)).toEqual([]);
    expect(unplacedKeys({ ...doc, brandNew: 1, team: { limits: 'shared', slotLeaseMs: 1, maxStalenessMs: 1, extra: 2 } }).sort()).toEqual(['brandNew', 'team.extra']);
    // An entry edited on another page places its fields too.
    expect(entryFor('agentModelMap.opus')?.key).toBe('agentModelMap');
  });

  it('reads and writes dotted keys', () => {
    expect(settingKeys({ a: 1, team: { limits: 'x' }, list: [1] })).toEqual(['a', 'team.limits', 'list']);
    expect(settingAt({ team: { limits: 'x' } }, 'team.limits')).toBe('x');
    expect(settingAt({ team: {} }, 'team.limits')).toBeUndefined();
    expect(settingsPatch(new Map<string, unknown>([['updateCheck', false], ['team.limits', 'instance'], ['team.slotLeaseMs', 3000]]))).toEqual({
      updateCheck: false,
      team: { limits: 'instance', slotLeaseMs: 3000 },
    });
    expect(settingId('team.limits')).toBe('set-team-limits');
  });

  it('form values in and out with the ranges', () => {
    const ms = entry('firstByteTimeoutMs');
    expect(fromRawValue(ms, '2000')).toEqual({ value: 2000 });
    expect(fromRawValue(ms, '999')).toEqual({ error: 'Must be 1,000 to 3,600,000 ms.' });
    expect(fromRawValue(ms, '1.5')).toEqual({ error: 'Enter a whole number of ms.' });
    expect(fromRawValue(entry('trustedProxies'), '10.0.0.5\n\n fd00::/8 ')).toEqual({ value: ['10.0.0.5', 'fd00::/8'] });
    expect(fromRawValue(entry('team.limits'), 'both')).toEqual({ error: 'Choose one of shared, instance.' });
    expect(toRawValue(entry('trustedProxies'), ['a', 'b'])).toBe('a\nb');
    expect(toRawValue(entry('updateCheck'), true)).toBe(true);
    expect(describeSetting(entry('maxBodyBytes'), 33554432)).toBe('32 MiB (33554432 bytes)');
    expect(describeSetting(entry('firstTokenTimeoutMs'), 0)).toBe('off (0)');
    expect(describeSetting(entry('firstByteTimeoutMs'), 120000)).toBe('2 min (120000 ms)');
    expect(entryForParam('agentModelMap.opus')?.key).toBe('agentModelMap');
    expect(entryForParam(undefined)).toBeUndefined();
  });
});
