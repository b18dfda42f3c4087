// Issue 42 items 5 and 6 on the mixed state the issue was tried on (a wrong
// key, a 404 base URL, a closed port with a model lock, a 429-ing one, an
// OPEN breaker, a leased one, a switched-off one, locked models, a degraded
// breaker, a serving one; a combo dead for good and one dead for 30 s). The
// fixture is what backend/health.Compute says of that state
// (TestMixedStateFixture keeps it equal). Every Overview number comes from one
// pass and agrees; fixes fit the state, name their target and are disabled
// with the reason for a role that cannot use them.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { setSession } from '../../src/api';
import { routeTable } from './route-table';
import { FIX_ROUTES, fixAccess, fixesForState, fixLabelFor, planFix } from '../../src/lib/fixes';
import { connectionCounts, problems, type HealthReport } from '../../src/lib/healthmodel';
import { NEEDS_A_FIX, overviewNumbers, providerRow } from '../../src/lib/overview-numbers';
import { describeEvent } from '../../src/lib/sse';
import { deniedNote, fixButtons } from '../../src/views/fix-buttons';

const here = dirname(fileURLToPath(import.meta.url));
const report = JSON.parse(readFileSync(resolve(here, 'fixtures/health-mixed.json'), 'utf8')) as HealthReport & { at: string };
const NOW = Date.parse(report.at);

describe('the Overview numbers on a mixed state', () => {
  const n = overviewNumbers(report, NOW);
  const s = report.summary!;

  it('tiles add up and equal the summary the status line reads', () => {
    const c = n.counts;
    expect(c.serving + c.cooling + c.breakerOpen + c.outOfService).toBe(c.total);
    expect([c.total, c.serving, c.cooling, c.breakerOpen, c.outOfService]).toEqual([s.total, s.serving, s.cooling, s.breakerOpen, s.outOfService]);
    expect(c).toMatchObject({ total: 10, serving: 3, cooling: 1, breakerOpen: 1, outOfService: 5 });
    expect(n.line).toMatch(/^3 of 10 connections serving/);
  });

  it('the live feed says the same split as the tiles', () => {
    const line = describeEvent({ id: null, type: 'health', at: report.at, data: { ...(report as object), status: 'degraded' } as never });
    expect(line.detail).toBe(n.feed);
    expect(line.detail).toBe('3 of 10 serving · 1 cooling down · 1 breaker open · 5 out of service');
  });

  it('providers count the same connections and never read Degraded beside "n of n serving"', () => {
    let serving = 0;
    let total = 0;
    for (const p of n.providers) {
      const [a, b] = p.serving.split(' of ').map(Number);
      serving += a!;
      total += b!;
      if (a === b && b! > 0) expect(p.label, p.id).not.toBe('Degraded');
      if (p.label !== 'Healthy') expect(p.reason, p.id).not.toBe('');
    }
    expect([serving, total]).toEqual([s.serving, s.total]);
    const wobbly = n.providers.find((p) => p.id === 'openai-compatible:wb')!;
    expect(wobbly).toMatchObject({ label: 'Serving', tone: 'warn', serving: '1 of 1' });
    expect(providerRow({ id: 'x', state: 'degraded', serving: 1, total: 2, reason: '1 of 2 connections not serving' }).label).toBe('Degraded');
  });

  it('a dead combo says back in only when a target comes back by itself', () => {
    const forever = n.deadCombos.find((c) => c.name === 'forever')!;
    expect(forever.back).toBe('');
    expect(forever.targets.map((t) => t.back)).toEqual([NEEDS_A_FIX, NEEDS_A_FIX]);
    const later = n.deadCombos.find((c) => c.name === 'later')!;
    expect(later.back).toBe('back in 30 s');
    expect(later.targets.map((t) => t.back)).toEqual([NEEDS_A_FIX, 'back in 30 s']);
  });

  it('the problem list counts each not-serving connection once', () => {
    const conns = problems(report).filter((p) => p.kind === 'connection' && p.down);
    expect(conns.length).toBe(s.total - s.serving);
    expect(connectionCounts(report.connections).total).toBe(report.connections!.length);
  });
});

describe('fixes fit the state, name their target, respect the role', () => {
  afterEach(() => setSession(null));

  it('a state only a person ends offers its own fix, never Unlock models', () => {
    for (const c of report.connections!) {
      const fit = fixesForState(c.state, c.fixes);
      expect(fit, c.id).toEqual(c.fixes); // the backend already fits them
      if (['unreachable', 'endpoint_not_found', 'key_rejected', 'terminal'].includes(c.state)) expect(fit).not.toContain('unlock_models');
    }
    // Older data (or another page's list) is fitted too.
    expect(fixesForState('unreachable', ['clear_cooldown', 'unlock_models', 'edit_connection'])).toEqual(['edit_connection']);
    expect(fixesForState('endpoint_not_found', ['unlock_models', 'edit_connection'])).toEqual(['edit_connection']);
    expect(fixesForState('key_rejected', ['reset_breaker', 'replace_key'])).toEqual(['replace_key']);
    expect(fixLabelFor('edit_connection', 'endpoint_not_found')).toBe('Fix base URL');
    expect(fixLabelFor('edit_connection', 'unreachable')).toBe('Check address');
    expect(planFix('edit_connection', { id: 'nf', name: 'x', state: 'endpoint_not_found' })).toEqual({ kind: 'link', href: '/connections', params: { edit: 'nf', field: 'baseUrl' } });
  });

  it('roles: viewers use none, operators the resilience fixes, admins all (by the gateway\'s route table)', () => {
    const routes = routeTable();
    const as = (role: string) => ({ role, routes });
    const all = ['reset_breaker', 'clear_cooldown', 'unlock_models', 'release_lease', 'enable', 'replace_key', 'edit_connection', 'set_price'];
    expect(Object.keys(FIX_ROUTES).sort()).toEqual([...all].sort());
    expect(all.filter((f) => fixAccess(f, as('viewer')).allowed)).toEqual([]);
    expect(all.filter((f) => fixAccess(f, as('operator')).allowed)).toEqual(['reset_breaker', 'clear_cooldown', 'unlock_models', 'release_lease']);
    expect(all.filter((f) => fixAccess(f, as('admin')).allowed)).toEqual(all);
    expect(fixAccess('replace_key', as('viewer')).reason).toBe('Only an admin can do this (you are a viewer).');
    expect(fixAccess('clear_cooldown', as('viewer')).reason).toBe('Needs an operator or an admin (you are a viewer).');
  });

  it('buttons in a dead combo card name their connection; a viewer gets them disabled with the reason', () => {
    const forever = report.combos!.find((c) => c.name === 'forever')!;
    const opts = { signal: new AbortController().signal, message: document.createElement('div'), onDone: () => undefined, nameTarget: true };
    const cands = forever.targets!.flatMap((t) => t.connections ?? []);
    setSession({ kind: 'user', role: 'viewer' } as never);
    for (const c of cands) {
      const btns = fixButtons({ id: c.id, name: c.name, state: c.state }, c.fixes, opts);
      expect(btns.length, c.id).toBe(1);
      const b = btns[0] as HTMLButtonElement;
      expect(b.textContent).toContain(c.name);
      expect(b.disabled).toBe(true);
      expect(b.dataset['denied']).toMatch(/admin/);
      expect(deniedNote(btns)?.textContent).toBe(b.dataset['denied']);
    }
    setSession({ kind: 'user', role: 'admin' } as never);
    const nf = cands.find((c) => c.state === 'endpoint_not_found')!;
    const [a] = fixButtons({ id: nf.id, name: nf.name, state: nf.state }, nf.fixes, opts);
    expect(a!.tagName).toBe('A');
    expect(a!.textContent).toBe(`Fix base URL · ${nf.name}`);
    expect(a!.getAttribute('href')).toContain('field=baseUrl');
  });
});
