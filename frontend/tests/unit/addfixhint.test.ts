import { describe, expect, it } from 'vitest';
import { addFixHint } from '../../src/views/connections';

describe('Add connection warning (issue 42)', () => {
  it('offers the fix that fits the failed check', () => {
    expect(addFixHint('the provider rejected this key (401: bad key)')).toContain('Replace the key');
    expect(addFixHint('this URL answers 404: check the base URL (m at http://x)')).toContain('base URL');
    expect(addFixHint('the upstream could not be reached: connection refused; check the base URL and the network')).toContain('base URL');
  });
});
