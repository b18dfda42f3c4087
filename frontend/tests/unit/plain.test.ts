// Issue 42 item 8: raw upstream bodies and HTTP statuses read as words.
import { describe, expect, it } from 'vitest';
import { upstreamWords } from '../../src/lib/plain';

describe('upstreamWords', () => {
  it.each([
    ['429: {"error":{"message":"Rate limit reached for gpt-4o","type":"requests"}}', 'Rate limit reached for gpt-4o'],
    ['HTTP 503 – upstream overloaded', 'Upstream overloaded'],
    ['{"message":"model not found"}', 'Model not found'],
    ['dial tcp 127.0.0.1:9: connection refused', 'Dial tcp 127.0.0.1:9: connection refused'],
    ['500: ', 'The provider answered with an error.'],
    ['', ''],
  ])('%s', (raw, want) => {
    const got = upstreamWords(raw);
    expect(got).toBe(want);
    expect(got).not.toMatch(/\{"|^\d{3}:/);
  });
});
