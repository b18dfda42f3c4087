import { afterEach, describe, expect, it } from 'vitest';
import { fixLabel, plainCode, sentence, setWords, stateWords } from '../../src/lib/words';
import { stateBadge } from '../../src/lib/healthmodel';

describe('the catalogue of plain words', () => {
  afterEach(() => setWords(null));
  it('spells a code out until the catalogue is loaded', () => {
    expect(sentence('UPSTREAM_RATE_LIMITED')).toBe('Upstream rate limited.');
    expect(sentence('')).toBe('');
    expect(stateBadge('unreachable')).toEqual({ label: 'Unreachable', tone: 'bad' });
  });
  it('uses the sentences and labels GET /api/words serves', () => {
    setWords({
      codes: { UPSTREAM_RATE_LIMITED: 'The provider is limiting how fast this account may send requests.' },
      states: { cooling: { label: 'Cooling down', sentence: 'Resting after errors.' }, serving: { label: 'Healthy', sentence: 'Takes requests.' } },
      fixes: { replace_key: 'Replace key' },
    });
    expect(sentence('UPSTREAM_RATE_LIMITED')).toMatch(/limiting how fast/);
    expect(sentence('NEW_CODE')).toBe('New code.');
    expect(stateWords('cooling')?.sentence).toBe('Resting after errors.');
    expect(stateBadge('cooling')).toEqual({ label: 'Cooling down', tone: 'warn' });
    expect(fixLabel('replace_key')).toBe('Replace key');
  });
  it('keeps the code visible as a small tag beside the sentence', () => {
    const el = plainCode('UPSTREAM_TIMEOUT') as HTMLElement;
    expect(el.querySelector('code.code-tag')?.textContent).toBe('UPSTREAM_TIMEOUT');
    expect(el.textContent).toContain('Upstream timeout.');
    expect(plainCode('')).toBe('');
  });
});
