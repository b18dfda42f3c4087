import { describe, expect, it } from 'vitest';
import { describeLive, formatModelCaps, parseModelCaps, queueNote, sameCaps } from '../../src/lib/concurrency';

describe('parseModelCaps', () => {
  it('reads one model=cap per line', () => {
    expect(parseModelCaps('glm-5=1\n  glm-4.7 = 3 \n\n')).toEqual({ caps: { 'glm-5': 1, 'glm-4.7': 3 }, errors: [] });
    expect(parseModelCaps('')).toEqual({ caps: {}, errors: [] });
  });
  it('keeps = inside a model id (the last = separates the cap)', () => {
    expect(parseModelCaps('a=b=2').caps).toEqual({ 'a=b': 2 });
  });
  it('names each bad line', () => {
    const r = parseModelCaps('glm-5\nx=0\ny=10001\nz=1.5\n=3\nm=1\nm=2');
    expect(r.errors).toEqual([
      'line 1: write model=cap, e.g. glm-5=1',
      'line 2: the cap of x must be from 1 to 10000',
      'line 3: the cap of y must be from 1 to 10000',
      'line 4: write model=cap, e.g. glm-5=1',
      'line 5: write model=cap, e.g. glm-5=1',
      'line 7: m is listed twice',
    ]);
    expect(r.caps).toEqual({ m: 1 });
  });
});

describe('formatModelCaps', () => {
  it('round-trips sorted lines', () => {
    expect(formatModelCaps({ b: 3, a: 1 })).toBe('a=1\nb=3');
    expect(parseModelCaps(formatModelCaps({ b: 3, a: 1 })).caps).toEqual({ a: 1, b: 3 });
    expect(formatModelCaps(null)).toBe('');
    expect(sameCaps({ a: 1 }, { a: 1 })).toBe(true);
    expect(sameCaps({ a: 1 }, { a: 2 })).toBe(false);
    expect(sameCaps({}, undefined)).toBe(true);
  });
});

describe('describeLive', () => {
  it('says what is in flight, queued and capped', () => {
    expect(describeLive({ inFlight: 2, queued: 1, maxConcurrent: 2, effective: true })).toBe('2 in flight · 1 queued · cap 2 · queue on');
    expect(describeLive({ inFlight: 0, waiting: 3, modelConcurrency: { m: 1 } })).toBe('3 queued · 1 model cap');
    expect(describeLive({ inFlight: 0 })).toBe('');
    expect(describeLive(null)).toBe('');
  });
  it('mentions a live pause only', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(describeLive({ pausedUntil: '2026-01-01T00:00:05Z' }, now)).toBe('paused by a retry hint');
    expect(describeLive({ pausedUntil: '2025-12-31T23:59:59Z' }, now)).toBe('');
  });
});

describe('queueNote', () => {
  it('tells a wait from a refusal', () => {
    expect(queueNote(1500, 'connection maxConcurrent')).toBe('queued 1.5 s (connection maxConcurrent)');
    expect(queueNote(0, 'RATE_LIMIT_QUEUE_FULL')).toBe('refused: RATE_LIMIT_QUEUE_FULL');
    expect(queueNote(0, '')).toBe('');
    expect(queueNote(null, null)).toBe('');
  });
});
