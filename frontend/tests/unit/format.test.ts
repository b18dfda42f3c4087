import { describe, expect, it } from 'vitest';
import {
  formatAgo,
  formatCountdown,
  formatDuration,
  humanizeKey,
  maskSecret,
  msHint,
  parseList,
  remainingMs,
  shellExports,
} from '../../src/lib/format';

describe('formatDuration', () => {
  it('uses the largest sensible units', () => {
    expect(formatDuration(850)).toBe('0.85 s');
    expect(formatDuration(5)).toBe('0.005 s');
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(1500)).toBe('1.5 s');
    expect(formatDuration(30_000)).toBe('30 s');
    expect(formatDuration(60_000)).toBe('1 min');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(3_720_000)).toBe('1 h 2 min');
    expect(formatDuration(86_400_000 * 2 + 3_600_000 * 5)).toBe('2 d 5 h');
  });
  it('handles missing and negative values', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(Number.NaN)).toBe('—');
    expect(formatDuration(-2000)).toBe('-2 s');
  });
});

describe('formatCountdown', () => {
  it('rounds seconds up so now means done, in formatDuration units', () => {
    expect(formatCountdown(119_001)).toBe('2 min');
    expect(formatCountdown(118_000)).toBe('1 min 58 s');
    expect(formatCountdown(7_000)).toBe('7 s');
    expect(formatCountdown(1)).toBe('1 s');
    expect(formatCountdown(0)).toBe('now');
    expect(formatCountdown(-5)).toBe('now');
    expect(formatCountdown(3_723_000)).toBe('1 h 2 min');
  });
});

describe('remainingMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('accepts ISO strings, epoch ms and dates, never negative', () => {
    expect(remainingMs('2026-01-01T00:02:00Z', now)).toBe(120_000);
    expect(remainingMs(now + 500, now)).toBe(500);
    expect(remainingMs(new Date(now - 1000), now)).toBe(0);
    expect(remainingMs(null, now)).toBe(0);
    expect(remainingMs('not a date', now)).toBe(0);
  });
});

describe('small formatters', () => {
  it('msHint shows seconds next to millisecond fields', () => {
    expect(msHint('30000')).toBe('milliseconds (= 30 s)');
    expect(msHint(600_000)).toBe('milliseconds (= 10 min)');
    expect(msHint('')).toBe('milliseconds');
    expect(msHint('abc')).toBe('milliseconds');
  });
  it('humanizeKey makes labels from setting names', () => {
    expect(humanizeKey('maxWaitMs')).toBe('Max wait');
    expect(humanizeKey('autoEnableApiKeyProviders')).toBe('Auto enable API key providers');
    expect(humanizeKey('minBytesPerSecond')).toBe('Min bytes per second');
  });
  it('maskSecret keeps the prefix and last four characters', () => {
    expect(maskSecret('sk-omni-ABCDEFGHIJKLMNOP1234')).toBe('sk-omni-••••••••••••1234');
    expect(maskSecret('abc')).toBe('•••');
    expect(maskSecret('')).toBe('');
  });
  it('parseList trims, drops blanks and repeats', () => {
    expect(parseList(' gpt-4o, gpt-4o-mini ,, gpt-4o,o3 ')).toEqual(['gpt-4o', 'gpt-4o-mini', 'o3']);
    expect(parseList('')).toEqual([]);
  });
  it('shellExports single-quotes values', () => {
    expect(shellExports({ A: 'x', B: "it's" , 'bad-name': 'y' })).toBe("export A='x'\nexport B='it'\\''s'");
  });
  it('formatAgo', () => {
    const now = 1_000_000;
    expect(formatAgo(now - 1000, now)).toBe('just now');
    expect(formatAgo(now - 65_000, now)).toBe('1 min 5 s ago');
    expect(formatAgo(undefined, now)).toBe('—');
  });
});
