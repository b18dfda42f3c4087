// Gating by role reads the gateway's route table (GET /api/session `routes`):
// what each role may send, the reason shown otherwise, and no route named in
// the dashboard's sources that the table does not have (a typo or a renamed
// route would gate an operator out, or worse, let a viewer click into a 403).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { setSession } from '../../src/api';
import { routeDenied, routeNeed, routesDenied } from '../../src/lib/access';
import { allowedOr, canSend, gateForm, gateWrites } from '../../src/views/role-gate';
import { routeTable } from './route-table';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const routes = routeTable();

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...sources(p));
    else if (d.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('route table', () => {
  it('is the gateway\'s: writes need operator or admin, a few reads admin', () => {
    expect(Object.keys(routes).length).toBeGreaterThan(60);
    expect(routeNeed(routes, 'POST /api/providers')).toBe('admin');
    expect(routeNeed(routes, 'POST /api/resilience/reset')).toBe('operator');
    expect(routeNeed(routes, 'POST /api/rules/preview')).toBe('viewer');
    expect(routeNeed(routes, 'GET /api/keys/default')).toBe('admin');
    expect(routeNeed(routes, 'POST /api/no/such/route')).toBe('admin'); // as on the gateway
    expect(routeNeed(null, 'GET /api/logs')).toBe('admin');
  });

  it('says why a role may not send a route, and nothing for one that may', () => {
    expect(routeDenied('POST /api/combos', { role: 'viewer', routes })).toBe('Only an admin can do this (you are a viewer).');
    expect(routeDenied('POST /api/combos', { role: 'operator', routes })).toBe('Only an admin can do this (you are an operator).');
    expect(routeDenied('POST /api/resilience/cooldowns', { role: 'viewer', routes })).toBe('Needs an operator or an admin (you are a viewer).');
    expect(routeDenied('POST /api/resilience/cooldowns', { role: 'operator', routes })).toBe('');
    expect(routeDenied('POST /api/combos', { role: 'admin', routes })).toBe('');
    expect(routeDenied('POST /api/combos', null)).toBe(''); // no session: a token of unknown role acts as admin
    expect(routesDenied(['POST /api/update/check', 'PATCH /api/settings'], { role: 'operator', routes })).toMatch(/Only an admin/);
  });

  it('every route the dashboard names is in the gateway\'s table', () => {
    const named = new Map<string, string>();
    for (const f of sources(src)) {
      for (const m of readFileSync(f, 'utf8').matchAll(/'((?:GET|POST|PUT|PATCH|DELETE) \/(?:api\/|metrics)[^']*)'/g)) named.set(m[1]!, f.slice(src.length + 1));
    }
    expect(named.size).toBeGreaterThan(20);
    const all = routeTable(true); // a page may name a public route (a client key's) in its words
    const unknown = [...named].filter(([k]) => !(k in all)).map(([k, f]) => `${k} (${f})`);
    expect(unknown).toEqual([]);
  });
});

describe('role-gate', () => {
  afterEach(() => setSession(null));

  it('disables what the role may not send, with the reason, and leaves the rest', () => {
    setSession({ kind: 'user', name: 'vic', role: 'operator', routes });
    const save = document.createElement('button');
    save.textContent = 'Save';
    const test = document.createElement('button');
    gateWrites([[save, 'PUT /api/combos/{id}'], [test, 'POST /api/providers/{id}/test'], [null, 'POST /api/combos']]);
    expect(save.disabled).toBe(true);
    expect(save.dataset['denied']).toBe('Only an admin can do this (you are an operator).');
    expect(save.title).toBe(save.dataset['denied']);
    expect(save.getAttribute('aria-label')).toBe('Save (Only an admin can do this (you are an operator).)');
    gateWrites([[save, 'PUT /api/combos/{id}']]); // idempotent
    expect(save.getAttribute('aria-label')).toBe('Save (Only an admin can do this (you are an operator).)');
    expect(test.disabled).toBe(false);
    expect(canSend('POST /api/resilience/reset')).toBe(true);
    expect(canSend('PATCH /api/resilience')).toBe(false);
  });

  it('a form: every control disabled and one line says why; a part left out for the role', () => {
    setSession({ kind: 'user', name: 'vic', role: 'viewer', routes });
    const form = document.createElement('form');
    form.append(document.createElement('input'), document.createElement('select'), document.createElement('button'));
    expect(gateForm(form, 'POST /api/keys', 'Creating a key')).toBe(true);
    expect(gateForm(form, 'POST /api/keys', 'Creating a key')).toBe(true);
    expect([...form.querySelectorAll('input, select, button')].every((c) => (c as HTMLInputElement).disabled)).toBe(true);
    expect(form.querySelectorAll('[data-testid="role-denied"]')).toHaveLength(1);
    expect(form.querySelector('[data-testid="role-denied"]')?.textContent).toBe('Creating a key: Only an admin can do this (you are a viewer).');
    expect(gateForm(form, 'POST /api/rules/preview')).toBe(false);
    let built = 0;
    const build = () => (built++, document.createElement('form'));
    expect(allowedOr('POST /api/providers', build, 'Adding a connection')?.textContent).toBe('Adding a connection: Only an admin can do this (you are a viewer).');
    expect(allowedOr('POST /api/providers/import', build)).toBeNull();
    expect(built).toBe(0);
    setSession({ kind: 'user', name: 'ada', role: 'admin', routes });
    expect(allowedOr('POST /api/providers', build)?.tagName).toBe('FORM');
  });
});
