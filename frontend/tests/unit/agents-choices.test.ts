import { describe, expect, it } from 'vitest';
import { choiceOptions } from '../../src/views/agents';

describe('Model for Configure', () => {
  it('offers the recommendation first, then the served combos and models', () => {
    const opts = choiceOptions([
      { name: 'main', kind: 'combo', serving: true, requests: 3, recommended: true, why: 'the combo used most in the last 7 days' },
      { name: 'cheap', kind: 'combo', serving: false, why: 'every connection serving cheap is out of service' },
      { name: 'gpt-4o-mini', kind: 'model', serving: true },
    ]);
    expect(opts.map((o) => o.value)).toEqual(['', 'main', 'cheap', 'gpt-4o-mini']);
    expect(opts[0]!.textContent).toBe('Recommended: main (the combo used most in the last 7 days)');
    expect(opts[1]!.textContent).toContain('3 requests this week');
    expect(opts[2]!.textContent).toContain('not serving now');
    expect(opts[3]!.textContent).toBe('gpt-4o-mini — model');
  });
  it('says when nothing serves', () => {
    expect(choiceOptions([])[0]!.textContent).toMatch(/nothing serves/);
  });
});
