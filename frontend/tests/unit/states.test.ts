// Every state the backend health model can produce, read by every page from
// the one health model (src/lib/healthmodel.ts): the Cooldown Manager row, the
// Overview problem, the Combos → Why? explanation and the connection badge
// give the same label and tone, and none says Healthy/eligible for a state
// that does not serve. The state list is parsed from the Go constants
// (backend/health/health.go), so a backend state the frontend lacks fails here.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STATUSES, filterConnections, statusBadge, STATUSES, toManagedConnections } from '../../src/lib/cooldowns';
import { explainModel, targetBadges } from '../../src/lib/explain';
import { CONNECTION_STATES, connectionBadge, HEALTH_STATES, problems, stateBadge, stateInfo } from '../../src/lib/healthmodel';
import { setWords, type StateWords } from '../../src/lib/words';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** `Name State = "name"` constants of backend/health/health.go. */
function backendStates(): string[] {
  const text = readFileSync(resolve(root, 'backend/health/health.go'), 'utf8');
  return [...text.matchAll(/^\s*[A-Z]\w*\s+State\s*=\s*"([a-z_]+)"/gm)].map((m) => m[1]!);
}

/** The `states` catalogue of backend/words/words.go (what GET /api/words serves). */
function backendStateWords(): Record<string, StateWords> {
  const text = readFileSync(resolve(root, 'backend/words/words.go'), 'utf8');
  const block = text.slice(text.indexOf('var states = map[string]State{'));
  const body = block.slice(0, block.indexOf('\n}\n'));
  const out: Record<string, StateWords> = {};
  for (const m of body.matchAll(/"([a-z_]+)":\s*\{"([^"]*)",\s*"([^"]*)"\}/g)) out[m[1]!] = { label: m[2]!, sentence: m[3]! };
  return out;
}

const NOW = Date.parse('2026-06-01T12:00:00Z');
const LATER = new Date(NOW + 60_000).toISOString();

describe('the frontend health model knows every backend state', () => {
  it('parses the Go constants and finds each in HEALTH_STATES', () => {
    const go = backendStates();
    expect(go.length).toBeGreaterThanOrEqual(13); // the parse itself works
    expect(go).toContain('unreachable');
    expect([...HEALTH_STATES].sort()).toEqual([...new Set(go)].sort());
  });

  it('gives each state its own label, tone and sentence (no humanized fallback)', () => {
    for (const s of HEALTH_STATES) {
      const info = stateInfo(s);
      expect(info.label, s).not.toBe(s.replace(/_/g, ' '));
      expect(info.description, s).not.toBe('');
    }
  });

  it('every connection state has a Cooldown Manager filter; only serving is hidden by default', () => {
    expect(STATUSES).toBe(CONNECTION_STATES);
    for (const s of CONNECTION_STATES) expect(DEFAULT_STATUSES.has(s), s).toBe(s !== 'serving');
  });
});

/** What each page shows for a connection in state `s`. */
function pages(s: string) {
  const info = stateInfo(s);
  const [row] = toManagedConnections([{ id: 'c1', provider: 'openai', name: 'Work', status: 'healthy', health: { state: s, until: LATER } }], NOW);
  const shownInCooldowns = filterConnections([row!], { provider: '', statuses: DEFAULT_STATUSES }).length === 1;
  const probs = problems({ connections: [{ id: 'c1', name: 'Work', provider: 'openai', state: s, serving: info.serving }] });
  const lookup = () => ({ state: s, reason: `Work is ${s}` });
  const answer = { model: 'm', candidates: [{ order: 1, status: 'eligible', connectionId: 'c1', connectionName: 'Work', model: 'm' }] };
  const why = explainModel(answer, NOW, [], [], lookup);
  const badges = targetBadges(answer, '', NOW, lookup);
  return { info, row: row!, shownInCooldowns, probs, why, badges, conn: connectionBadge({ id: 'c1' }, { state: s }) };
}

function agree() {
  for (const s of CONNECTION_STATES) {
    it(`${s}: every page gives the same label and tone`, () => {
      const p = pages(s);
      const want = { label: stateBadge(s).label, tone: stateBadge(s).tone };
      expect(p.row.status).toBe(s);
      expect({ label: statusBadge(p.row.status).label, tone: statusBadge(p.row.status).tone }).toEqual(want);
      expect({ label: p.conn.label, tone: p.conn.tone }).toEqual(want);
      expect(p.shownInCooldowns).toBe(p.info.shownByDefault);
      if (s === 'serving') {
        expect(p.probs).toEqual([]);
      } else {
        expect(p.probs).toHaveLength(1);
        expect({ label: stateBadge(p.probs[0]!.state).label, tone: stateBadge(p.probs[0]!.state).tone }).toEqual(want);
      }
      if (p.info.serving) {
        expect(p.why.eligible).toHaveLength(1);
      } else {
        expect(p.why.eligible).toEqual([]);
        expect(p.why.excluded[0]!.info).toMatchObject(want);
        expect(p.why.excluded[0]!.info!.description).toBe(`Work is ${s}`); // the health model's reason
        expect(p.badges.map((b) => ({ label: b.label, tone: b.tone }))).toEqual([want]);
      }
    });
  }

  it('no page says Healthy or eligible for a state that does not serve', () => {
    for (const s of HEALTH_STATES.filter((x) => !stateInfo(x).serving)) {
      const p = pages(s);
      for (const label of [stateBadge(s).label, p.conn.label, statusBadge(s).label, ...p.badges.map((b) => b.label)]) {
        expect(label, s).not.toMatch(/healthy|eligible|available/i);
      }
      expect(stateBadge(s).tone, s).not.toBe('ok');
      expect(p.why.eligible, s).toEqual([]);
      expect(p.why.summary, s).not.toMatch(/would go to/);
    }
  });

  it('the states named in issue 42 are out of routing on every page', () => {
    for (const s of ['unreachable', 'breaker_open', 'key_rejected', 'endpoint_not_found']) {
      const p = pages(s);
      expect(p.info.serving, s).toBe(false);
      expect(p.shownInCooldowns, s).toBe(true);
      expect(p.row.status, s).toBe(s);
      expect(p.why.excluded[0]?.status, s).toBe('excluded');
    }
  });
}

describe('before the words catalogue loads', () => {
  beforeAll(() => setWords(null));
  it('labels come from the built-in badges', () => expect(stateBadge('unreachable').label).toBe('Unreachable'));
  agree();
});

describe('with the words catalogue of backend/words/words.go', () => {
  const states = backendStateWords();
  beforeAll(() => setWords({ codes: {}, states, fixes: {} }));
  afterAll(() => setWords(null));

  it('the catalogue names every connection state', () => {
    for (const s of CONNECTION_STATES) expect(states[s]?.label, s).toBeTruthy();
    expect(stateBadge('unreachable').label).toBe(states['unreachable']!.label);
  });

  agree();
});

describe('a connection with no health-model entry yet reads its own fields in the same words', () => {
  it.each([
    [{ id: 'a', isActive: false }, 'disabled'],
    [{ id: 'a', testStatus: 'unreachable' }, 'unreachable'],
    [{ id: 'a', testStatus: 'key_rejected' }, 'key_rejected'],
    [{ id: 'a', testStatus: 'endpoint_not_found' }, 'endpoint_not_found'],
    [{ id: 'a', testStatus: 'banned' }, 'terminal'],
    [{ id: 'a', rateLimitedUntil: LATER }, 'cooling'],
    [{ id: 'a', testStatus: 'active' }, 'serving'],
  ])('%o → %s', (fields, state) => {
    const b = connectionBadge(fields, undefined, NOW);
    expect(b.state).toBe(state);
    expect({ label: b.label, tone: b.tone }).toEqual(stateBadge(state));
  });
});
