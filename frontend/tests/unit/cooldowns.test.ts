import { describe, expect, it } from 'vitest';
import {
  applyConnectionEventToRow,
  clearSummary,
  DEFAULT_STATUSES,
  filterConnections,
  isSelectable,
  parseStatusParam,
  providersOf,
  pruneSelection,
  ruleRangeError,
  statusBadge,
  statusParam,
  tickConnections,
  toManagedConnections,
  type CooldownConnection,
} from '../../src/lib/cooldowns';

const NOW = 1_700_000_000_000;
const conn = (id: string, extra: Partial<CooldownConnection> = {}): CooldownConnection => ({
  id,
  provider: 'openai-compatible',
  name: id.toUpperCase(),
  authType: 'apikey',
  status: 'healthy',
  testStatus: 'active',
  cooldownRemainingMs: 0,
  backoffLevel: 0,
  lockouts: [],
  ...extra,
});

const list = toManagedConnections(
  [
    conn('a', { status: 'cooling_down', cooldownRemainingMs: 5000, backoffLevel: 1 }),
    conn('b', { status: 'model_locked', lockouts: [{ provider: 'openai-compatible', connectionId: 'b', model: 'gpt-4o', scope: 'model', remainingMs: 3000 }] }),
    conn('t', { status: 'terminal', testStatus: 'banned' }),
    conn('h'),
    conn('g', { provider: 'gemini', status: 'cooling_down', cooldownRemainingMs: 60_000 }),
  ],
  NOW,
);

describe('cooldown rows', () => {
  it('sort by status and keep live deadlines', () => {
    // The API's older status words are read in the health model's: worst first.
    expect(list.map((r) => `${r.id}:${r.status}`)).toEqual(['t:terminal', 'a:cooling', 'g:cooling', 'b:models_locked', 'h:serving']);
    expect(list.find((r) => r.id === 'a')!.until).toBe(NOW + 5000);
    expect(list.find((r) => r.id === 'b')!.lockoutRows[0]!.until).toBe(NOW + 3000);
  });

  it('turn healthy when countdowns run out (a lockout first, then the cooldown)', () => {
    const at3 = tickConnections(list, NOW + 3000);
    expect(at3.find((r) => r.id === 'b')).toMatchObject({ status: 'serving', lockoutRows: [] });
    expect(at3.find((r) => r.id === 'a')!.status).toBe('cooling');
    const at5 = tickConnections(at3, NOW + 5000);
    expect(at5.find((r) => r.id === 'a')).toMatchObject({ status: 'serving', until: 0 });
    expect(at5.find((r) => r.id === 't')!.status).toBe('terminal');
    expect(tickConnections(at5, NOW + 5001)).toBe(at5); // nothing changed: same array
  });

  it('fold live connection events in; unknown ids ask for a fetch', () => {
    const next = applyConnectionEventToRow(list, { id: 'h', status: 'cooling_down', cooldownRemainingMs: 120_000, backoffLevel: 2, errorCode: '429' }, NOW)!;
    expect(next.find((r) => r.id === 'h')).toMatchObject({ status: 'cooling', until: NOW + 120_000, backoffLevel: 2, errorCode: '429' });
    const healed = applyConnectionEventToRow(list, { id: 'b', status: 'healthy', cooldownRemainingMs: 0 }, NOW)!;
    expect(healed.find((r) => r.id === 'b')!.status).toBe('models_locked'); // still has a locked model
    expect(applyConnectionEventToRow(list, { id: 'zz', status: 'healthy' }, NOW)).toBeNull();
  });
});

describe('filters and selection', () => {
  it('hide healthy by default and filter by provider', () => {
    expect(filterConnections(list, { provider: '', statuses: DEFAULT_STATUSES }).map((r) => r.id)).toEqual(['t', 'a', 'g', 'b']);
    expect(filterConnections(list, { provider: 'gemini', statuses: DEFAULT_STATUSES }).map((r) => r.id)).toEqual(['g']);
    expect(filterConnections(list, { provider: '', statuses: new Set(['serving']) }).map((r) => r.id)).toEqual(['h']);
    expect(providersOf(list)).toEqual(['gemini', 'openai-compatible']);
  });

  it('never select terminal connections, and drop hidden ones from the selection', () => {
    expect(isSelectable({ status: 'terminal' })).toBe(false);
    expect(isSelectable({ status: 'cooling' })).toBe(true);
    const shown = filterConnections(list, { provider: 'openai-compatible', statuses: DEFAULT_STATUSES });
    expect([...pruneSelection(new Set(['a', 'g', 't', 'b']), shown)]).toEqual(['a', 'b']);
  });

  it('round-trip the status filter through the URL', () => {
    expect(statusParam(DEFAULT_STATUSES)).toBeNull();
    expect(statusParam(new Set(['cooling', 'terminal']))).toBe('terminal,cooling');
    // Old links with the older words still work.
    expect([...parseStatusParam('cooling_down,bogus,healthy')!]).toEqual(['cooling', 'serving']);
    expect([...parseStatusParam('unreachable')!]).toEqual(['unreachable']);
    expect(parseStatusParam('bogus')).toBeNull();
  });

  it('name the terminal reason in the badge', () => {
    expect(statusBadge('terminal', 'credits_exhausted')).toMatchObject({ label: 'Out of service: credits exhausted', tone: 'bad' });
    expect(statusBadge('models_locked').label).toBe('Models locked');
  });
});

describe('clearSummary', () => {
  it('says what was cleared and skipped in one sentence', () => {
    expect(clearSummary({ ok: true, cleared: 2, lockoutsCleared: 1, skippedTerminal: 1, unchanged: 0 })).toBe('Cleared 2 cooldowns and 1 lockout; 1 terminal connection skipped.');
    expect(clearSummary({ ok: true, cleared: 1, unchanged: 0, skippedTerminal: 0, lockoutsCleared: 0 })).toBe('Cleared 1 cooldown.');
    expect(clearSummary({ ok: true, cleared: 0, lockoutsCleared: 3 })).toBe('Cleared 3 lockouts.');
    expect(clearSummary({ ok: true, cleared: 0, unchanged: 2, skippedTerminal: 2 })).toBe('Nothing to clear; 2 terminal connections skipped, 2 already clear.');
    expect(clearSummary(null)).toBe('Nothing to clear.');
  });

  it('checks the cooldown rule ranges the gateway clamps to', () => {
    expect(ruleRangeError('connectionCooldown.apikey.baseCooldownMs', 50)).toBe('Enter 0.1–600 s.');
    expect(ruleRangeError('connectionCooldown.oauth.maxBackoffSteps', 16)).toBe('Enter 0–15.');
    expect(ruleRangeError('connectionCooldown.oauth.maxBackoffSteps', 15)).toBeNull();
  });
});

describe('the Cooldown Manager reads the health model', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('a connection leased by another key is leased until the lease ends, then serving', () => {
    const [row] = toManagedConnections([{ id: 'a', provider: 'openai', name: 'A', status: 'leased', cooldownRemainingMs: 60_000 }], now);
    expect(row?.status).toBe('leased');
    expect(statusBadge('leased')).toMatchObject({ label: 'Leased', tone: 'warn' });
    expect(tickConnections([row!], now + 60_000)[0]?.status).toBe('serving');
  });
  it('a rejected key is its own terminal state: not selectable, never "expired"', () => {
    const [row] = toManagedConnections([{ id: 'k', provider: 'openai', name: 'K', status: 'key_rejected', testStatus: 'key_rejected' }], now);
    expect(row?.status).toBe('key_rejected');
    expect(isSelectable(row!)).toBe(false);
    expect(statusBadge('key_rejected').label).toBe('Key rejected');
    expect(DEFAULT_STATUSES.has('key_rejected')).toBe(true);
  });
  it('an unreachable connection is Unreachable, shown by default, and stays so until the health model says otherwise', () => {
    // The API sends the health model's entry beside its status: the entry wins.
    const [row] = toManagedConnections([{ id: 'u', provider: 'openai', name: 'U', status: 'healthy', health: { state: 'unreachable' } }], now);
    expect(row?.status).toBe('unreachable');
    expect(statusBadge(row!.status)).toMatchObject({ label: 'Unreachable', tone: 'bad' });
    expect(DEFAULT_STATUSES.has('unreachable')).toBe(true);
    expect(filterConnections([row!], { provider: '', statuses: DEFAULT_STATUSES })).toHaveLength(1);
    expect(tickConnections([row!], now + 3_600_000)[0]?.status).toBe('unreachable');
    // A cooldown event says nothing about reachability.
    expect(applyConnectionEventToRow([row!], { id: 'u', status: 'healthy', cooldownRemainingMs: 0 }, now)![0]!.status).toBe('unreachable');
    // The API's own status word for it is read as well.
    expect(toManagedConnections([{ id: 'v', provider: 'openai', status: 'unreachable' }], now)[0]?.status).toBe('unreachable');
  });
});
