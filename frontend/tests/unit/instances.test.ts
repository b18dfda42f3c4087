import { describe, expect, it } from 'vitest';
import { instanceLine, instancesSummary, parseInstances } from '../../src/lib/instances';

const NOW = Date.parse('2026-01-01T00:01:00Z');

describe('team server instances', () => {
  const answer = {
    shared: true,
    self: 'a:20128',
    instances: [
      { name: 'a:20128', version: '0.1.0', address: 'http://a:20128', startedAt: '2026-01-01T00:00:00Z', lastSeen: '2026-01-01T00:01:00Z', live: true, self: true },
      { name: 'b:20128', version: '0.1.0', address: 'http://b:20128', startedAt: '2026-01-01T00:00:00Z', lastSeen: '2026-01-01T00:00:30Z', live: false, self: false, secret: 'x' },
      { version: 'nameless' },
      'junk',
    ],
  };

  it('keep named rows with their fields only', () => {
    const list = parseInstances(answer);
    expect(list.shared).toBe(true);
    expect(list.self).toBe('a:20128');
    expect(list.instances.map((i) => i.name)).toEqual(['a:20128', 'b:20128']);
    expect(JSON.stringify(list)).not.toContain('secret');
  });

  it('read a desktop answer and garbage as not shared', () => {
    expect(parseInstances({ shared: false, self: 'solo', instances: [{ name: 'solo', live: true, self: true }] }).shared).toBe(false);
    expect(parseInstances(null)).toEqual({ shared: false, self: '', instances: [] });
  });

  it('summarise how many are live', () => {
    expect(instancesSummary(parseInstances(answer))).toBe('1 of 2 instances live');
    const all = parseInstances({ ...answer, instances: answer.instances.slice(0, 1) });
    expect(instancesSummary(all)).toBe('1 instance live');
  });

  it('describe each instance', () => {
    const [a, b] = parseInstances(answer).instances;
    expect(instanceLine(a!, NOW)).toBe('a:20128 · (this one) · live · v0.1.0');
    expect(instanceLine(b!, NOW)).toMatch(/^b:20128 · gone, last seen .+ · v0\.1\.0$/);
  });
});
