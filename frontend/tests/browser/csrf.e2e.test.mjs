// Browser test of issue 39's cross-port CSRF: the session cookie is
// SameSite=Strict, but SameSite ignores ports, so a page served from another
// loopback port is "same-site" and the browser sends the cookie with its
// requests. Signed in to the dashboard as an admin, the browser opens such a
// page, which tries every request a page can make without a CORS grant
// (no-cors fetch with a text/plain or typeless body, a JSON fetch that needs
// a preflight, a text/plain form POST) to create an admin user, an admin
// token and a top-priority connection. All are refused, nothing is created,
// and each refusal the gateway saw is in the audit log. The dashboard itself
// still makes changes. Real headless gateway (SQLite), Debian's Chromium.
//
//   cd frontend && OMNIROUTE_BIN=../bin/omniroute node --test tests/browser/csrf.e2e.test.mjs

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, test } from 'node:test';
import { freePort, launchChromium, management, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('csrf');
let evil;
after(() => new Promise((resolve) => (evil ? evil.close(resolve) : resolve())));

/** The attacker's page: every write a page of another origin can attempt, each reporting what it saw. */
function evilPage(gw) {
  const user = JSON.stringify({ email: 'mallory@evil.example', role: 'admin', password: 'mallory-password-1' });
  const token = JSON.stringify({ name: 'mallory-token', role: 'admin' });
  const conn = JSON.stringify({ provider: 'openai-compatible', name: 'mallory-conn', apiKey: 'x', baseUrl: 'http://127.0.0.1:9/v1', priority: 1, models: ['gpt-4o-mini'] });
  return `<!doctype html><meta charset="utf-8"><title>evil</title>
<form id="f" method="POST" enctype="text/plain" target="sink" action="${gw}/api/users"><input name='{"email":"form@evil.example","role":"admin","password":"form-password-1","x":"' value='"}'></form>
<iframe name="sink"></iframe>
<script>
window.results = [];
const GW = ${JSON.stringify(gw)};
const bodies = { '/api/users': ${JSON.stringify(user)}, '/api/tokens': ${JSON.stringify(token)}, '/api/providers': ${JSON.stringify(conn)} };
async function attempt(label, p, init) {
  try {
    const res = await fetch(GW + p, { method: 'POST', credentials: 'include', ...init });
    window.results.push(label + ' ' + p + ' ' + (res.type === 'opaque' ? 'opaque' : res.status));
  } catch (e) {
    window.results.push(label + ' ' + p + ' blocked');
  }
}
window.run = async () => {
  for (const p of Object.keys(bodies)) {
    await attempt('no-cors text/plain', p, { mode: 'no-cors', body: bodies[p] });
    await attempt('no-cors typeless', p, { mode: 'no-cors', body: new Blob([bodies[p]]) });
    await attempt('cors json', p, { mode: 'cors', headers: { 'Content-Type': 'application/json', 'X-OmniRoute-CSRF': '1' }, body: bodies[p] });
  }
  document.getElementById('f').submit();
  return window.results;
};
</script>`;
}

test('a page on another loopback port cannot act as the signed-in admin', async () => {
  const g = await startGateway(tmp);
  const mgmt = management(g.base, g.token);
  assert.equal((await mgmt('POST', '/api/users', { email: 'ada@example.com', role: 'admin', password: 'ada-password-1' })).status, 201);

  const evilPort = await freePort();
  evil = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(evilPage(g.base));
  });
  await new Promise((resolve) => evil.listen(evilPort, '127.0.0.1', resolve));

  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${g.base}/dashboard/`);
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Password', { exact: true }).fill('ada-password-1');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const nav = page.getByRole('navigation', { name: 'Dashboard pages' });
  await nav.getByRole('link', { name: 'Users', exact: true }).waitFor({ timeout: 10_000 });
  assert.ok((await context.cookies()).find((c) => c.name === 'omniroute_session'), 'signed in');

  // The attacker's page, same browser, another port of the same host.
  const attacker = await context.newPage();
  await attacker.goto(`http://127.0.0.1:${evilPort}/`);
  const results = await attacker.evaluate(() => window.run());
  await attacker.waitForTimeout(1500); // the form's navigation in the iframe
  assert.equal(results.length, 9, results.join('\n'));
  for (const r of results) assert.match(r, /opaque|blocked/, 'no answer readable by the other page');

  const users = (await mgmt('GET', '/api/users')).body.users.map((u) => u.email);
  assert.deepEqual(users, ['ada@example.com'], 'no user created');
  const tokens = (await mgmt('GET', '/api/tokens')).body.tokens.map((t) => t.name);
  assert.ok(!tokens.includes('mallory-token'), `no token created: ${tokens}`);
  const conns = (await mgmt('GET', '/api/providers')).body;
  assert.doesNotMatch(JSON.stringify(conns), /mallory-conn/, 'no connection created');

  // What reached the gateway was refused as a forgery and audited.
  const audit = (await mgmt('GET', '/api/audit?actor=ada@example.com&limit=100')).body.entries;
  const refused = audit.filter((e) => e.status === 403 && e.detail?.refused === 'CSRF_REFUSED');
  assert.ok(refused.length >= 7, `refusals audited: ${JSON.stringify(audit.map((e) => [e.action, e.status, e.detail]))}`);
  assert.equal(audit.filter((e) => e.status >= 200 && e.status < 300 && e.action !== 'POST /api/login').length, 0, 'no write succeeded');

  // The dashboard itself still changes things with the same cookie.
  await nav.getByRole('link', { name: 'Users', exact: true }).click();
  const made = await page.evaluate(async () => {
    const res = await fetch('/api/tokens', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-OmniRoute-CSRF': '1' }, body: JSON.stringify({ name: 'dash', role: 'viewer' }) });
    return res.status;
  });
  assert.equal(made, 201, 'the dashboard writes');
});
