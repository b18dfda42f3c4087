// Issue 42 item 8: the Audit Log reads as sentences, never a raw route, JSON
// body or id.
import { describe, expect, it } from 'vitest';
import { auditSentence, valueWords } from '../../src/lib/audit-words';
import { setWords } from '../../src/lib/words';

setWords({ codes: { ROLE_FORBIDDEN: 'Your role may not do this: ask an admin.' }, states: {}, fixes: {} });

const ID = '0123456789abcdef0123456789abcdef';

describe('auditSentence', () => {
  const cases: Array<[string, Parameters<typeof auditSentence>[0], string]> = [
    ['a priority change with the old value', { actor: 'ana@example.com', action: 'PATCH /api/providers/{id}', status: 200, detail: { vars: { id: ID }, body: { priority: 1 }, before: { priority: 2 }, targetName: 'Work OpenAI' } }, 'ana@example.com changed the priority of Work OpenAI from 2 to 1.'],
    ['a key replaced, never shown', { actor: 'ana@example.com', action: 'PATCH /api/providers/{id}', status: 200, detail: { vars: { id: ID }, body: { apiKey: '[redacted]', verify: true }, targetName: 'Work OpenAI' } }, 'ana@example.com replaced the key of Work OpenAI.'],
    ['switched off', { actor: 'bo', action: 'PATCH /api/providers/{id}', status: 200, detail: { vars: { id: ID }, body: { isActive: false }, targetName: 'Lab' } }, 'bo disabled Lab.'],
    ['an older entry named from the page', { actor: 'bo', action: 'DELETE /api/keys/{id}', status: 200, detail: { vars: { id: ID } } }, 'bo deleted the API key CI.'],
    ['an add', { actor: 'management token', action: 'POST /api/providers', status: 201, detail: { body: { name: 'up', apiKey: '[redacted]' } } }, 'The management token added the connection up.'],
    ['pause', { actor: 'otto@example.com', action: 'PATCH /api/gateway', status: 200, detail: { body: { paused: true } } }, 'otto@example.com paused the gateway.'],
    ['a role refusal', { actor: 'vic@example.com', action: 'POST /api/resilience/reset', status: 403, detail: { refused: 'ROLE_FORBIDDEN' } }, 'vic@example.com tried: reset the circuit breakers — refused: Your role may not do this: ask an admin.'],
    ['a failed sign-in', { actor: 'ada@example.com', action: 'POST /api/login', status: 401, detail: '' }, 'ada@example.com could not sign in (wrong email or password).'],
    ['a backup', { actor: 'ada@example.com', action: 'POST /api/backup', status: 200, detail: '{"event":"backup made"}' }, 'ada@example.com made a backup.'],
  ];
  const names = new Map([[ID, 'CI']]);
  for (const [what, e, want] of cases) {
    it(what, () => {
      const s = auditSentence(e, names);
      expect(s).toBe(want);
      expect(s).not.toMatch(/\/api\/|\{"|\[redacted\]|[0-9a-f]{32}|[A-Z]{3,}_[A-Z]/);
    });
  }
  it('shortens values', () => {
    expect(valueWords(['a', 'b'])).toBe('a, b');
    expect(valueWords([1, 2, 3, 4])).toBe('4 items');
    expect(valueWords(true)).toBe('on');
  });
});
