import { describe, expect, it } from 'vitest';
import { describePrefillProbe, modelPrefillOf, prefillTag, prefillWords } from '../../src/lib/prefill';

describe('prefillWords', () => {
  it('says in plain words whether a model finishes a cut answer, and how that is known', () => {
    expect(prefillWords({ prefill: 'honoured', prefillSource: 'learned' })).toEqual({
      state: 'honoured',
      label: 'finishes cut answers',
      sentence: 'A cut answer can be finished on this model (learned from an earlier cut answer).',
    });
    expect(prefillWords({ prefill: 'honoured', prefillSource: 'probe' }).sentence).toContain('found by the connection Test');
    expect(prefillWords({ prefill: 'refused', prefillSource: 'declared' })).toMatchObject({
      state: 'refused',
      label: 'cannot finish cut answers',
    });
    expect(prefillWords({ prefill: 'refused', prefillSource: 'declared' }).sentence).toContain('declared on the connection');
  });
  it('reads anything else as not known yet', () => {
    for (const e of [undefined, null, {}, { prefill: 'unknown' }, { prefill: 'maybe', prefillSource: 'learned' }]) {
      expect(prefillWords(e).state).toBe('unknown');
    }
  });
  it('never shows a raw code', () => {
    for (const p of ['honoured', 'refused', 'unknown']) {
      for (const src of ['learned', 'probe', 'declared', undefined]) {
        const w = prefillWords({ prefill: p, prefillSource: src });
        expect(`${w.label} ${w.sentence}`).not.toMatch(/honoured|refused|unknown|prefillSource|probe\b/);
      }
    }
  });
});

describe('the model list', () => {
  const c = { modelPrefill: { 'gpt-4o': { prefill: 'refused', prefillSource: 'learned' }, 'gpt-4o-mini': { prefill: 'unknown' } } };
  it('tags a known model with its words and the sentence as title', () => {
    const tag = prefillTag(modelPrefillOf(c, 'gpt-4o'))!;
    expect(tag.textContent).toBe(' · cannot finish cut answers');
    expect(tag.getAttribute('title')).toContain('never asked to');
    expect(tag.dataset['prefill']).toBe('refused');
  });
  it('shows nothing for a model not known yet or a connection without the field', () => {
    expect(prefillTag(modelPrefillOf(c, 'gpt-4o-mini'))).toBeNull();
    expect(prefillTag(modelPrefillOf({}, 'gpt-4o'))).toBeNull();
    expect(modelPrefillOf({ modelPrefill: 'x' }, 'gpt-4o')).toBeUndefined();
  });
});

describe('describePrefillProbe', () => {
  it('puts the Test probe in words', () => {
    expect(describePrefillProbe({ model: 'm', prefill: 'honoured', prefillSource: 'probe', message: 'honoured: the model continued' })).toBe(
      'cut answers on m: finishes cut answers (honoured: the model continued)',
    );
    expect(describePrefillProbe(undefined)).toBe('');
  });
});
