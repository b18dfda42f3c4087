// Browser test of issue 44 item 6: the Tokens page (People). An admin mints a
// scoped management token, sees its value once (copy button, warning), the
// test uses it against the management API, the admin revokes it (with a
// confirmation) and the same call is refused; a viewer sees why the page is
// not theirs, without create or revoke buttons. Both fit an 800×600 window.
// Real headless gateway (SQLite), Debian's Chromium.
//
//   cd frontend && OMNIROUTE_BIN=../bin/omniroute node --test tests/browser/tokens.e2e.test.mjs

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChromium, management, overflowing as overflowingNow, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('tokens');

/** Elements sticking out sideways at 800×600. */
async function overflowing(page) {
  await page.setViewportSize({ width: 800, height: 600 });
  await page.waitForTimeout(100); // a layout pass
  const out = await overflowingNow(page);
  await page.setViewportSize({ width: 1280, height: 800 });
  return out;
}

/** A management call with a bearer token, as a script would send it. */
async function call(base, token, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function signIn(page, email, password) {
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('mint a token, see it once, use it, revoke it; a viewer has no buttons', async () => {
  const g = await startGateway(tmp);
  const mgmt = management(g.base, g.token);
  assert.equal((await mgmt('POST', '/api/users', { email: 'ada@example.com', role: 'admin', password: 'ada-password-1' })).status, 201);
  assert.equal((await mgmt('POST', '/api/users', { email: 'vic@example.com', role: 'viewer', password: 'vic-password-1' })).status, 201);

  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: g.base });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  await page.goto(`${g.base}/dashboard/`);
  await signIn(page, 'ada@example.com', 'ada-password-1');
  const nav = page.getByRole('navigation', { name: 'Dashboard pages' });
  await nav.getByRole('link', { name: 'Tokens', exact: true }).click();
  await page.getByRole('heading', { name: 'Create token' }).waitFor({ timeout: 10_000 });
  // An empty gateway's list (no instance tokens on SQLite).
  await page.getByText('No tokens yet').waitFor({ timeout: 10_000 });
  const roles = await page.locator('#token-role option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(roles, ['viewer', 'operator', 'admin'], 'an admin may mint any role');

  // Mint an operator token: its value is shown once, with a warning and Copy.
  await page.locator('#token-name').fill('nightly-script');
  await page.locator('#token-role').selectOption('operator');
  await page.getByRole('button', { name: 'Create token' }).click();
  const value = page.locator('#new-token-value');
  await value.waitFor({ timeout: 10_000 });
  const secret = await value.inputValue();
  assert.match(secret, /^omt_[A-Za-z0-9_-]{20,}$/);
  assert.match(await page.locator('#new-token-warning').innerText(), /will not be shown again/);
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  await page.getByText('Copied.').waitFor({ timeout: 5000 });
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'Copy put the value on the clipboard');
  const row = page.getByRole('row', { name: /nightly-script/ });
  await row.waitFor({ timeout: 10_000 });
  assert.match(await row.innerText(), /Operator[\s\S]*ada@example\.com[\s\S]*never/);
  assert.deepEqual(await overflowing(page), [], 'the Tokens page with a new value fits 800×600');

  // Done removes the value from the page; a reload never brings it back.
  await page.getByRole('button', { name: 'Done — I saved it' }).click();
  assert.equal(await value.count(), 0);
  assert.equal((await page.content()).includes(secret), false, 'the value left the page');
  await page.reload();
  await page.getByRole('row', { name: /nightly-script/ }).waitFor({ timeout: 10_000 });
  assert.equal((await page.content()).includes(secret), false, 'the list never shows the value');
  assert.match(await page.getByRole('row', { name: /nightly-script/ }).innerText(), new RegExp(secret.slice(0, 8)), 'its masked prefix is shown');

  // The script uses it: operator reads work, admin-only ones are refused.
  assert.equal((await call(g.base, secret, 'GET', '/api/audit')).status, 200);
  const who = await call(g.base, secret, 'GET', '/api/session');
  assert.deepEqual([who.body.kind, who.body.name, who.body.role], ['token', 'nightly-script', 'operator']);
  const refused = await call(g.base, secret, 'GET', '/api/users');
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error.code, 'ROLE_FORBIDDEN');
  await page.reload();
  const used = page.getByRole('row', { name: /nightly-script/ });
  await used.waitFor({ timeout: 10_000 });
  assert.doesNotMatch(await used.innerText(), /never/, 'last used is shown after a call');

  // Revoke, after a confirmation; the same call is then refused.
  await used.getByRole('button', { name: 'Revoke token nightly-script' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor({ timeout: 5000 });
  assert.match(await dialog.innerText(), /refuses it from its next request/);
  await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
  await page.getByText('Revoked “nightly-script”.').waitFor({ timeout: 10_000 });
  await page.getByText('No tokens yet').waitFor({ timeout: 10_000 });
  const after = await call(g.base, secret, 'GET', '/api/audit');
  assert.equal(after.status, 401, 'a revoked token is refused');
  assert.equal(after.body.error.code, 'MANAGEMENT_AUTH_REQUIRED');

  // A viewer: the page says why, with no create or revoke button and no list.
  await mgmt('POST', '/api/tokens', { name: 'other-script', role: 'viewer' });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Email', { exact: true }).waitFor({ timeout: 10_000 });
  await signIn(page, 'vic@example.com', 'vic-password-1');
  await nav.getByRole('link', { name: 'Tokens', exact: true }).click();
  const why = page.getByTestId('tokens-forbidden');
  await why.waitFor({ timeout: 10_000 });
  assert.match(await why.innerText(), /Only an admin can see, create or revoke management tokens[\s\S]*Your role is Viewer/);
  const main = page.locator('main');
  assert.equal(await main.getByRole('button', { name: /Create token|Revoke/ }).count(), 0, 'no create or revoke button for a viewer');
  assert.equal(await main.locator('form, table').count(), 0);
  assert.equal(await page.getByText('other-script').count(), 0, 'a viewer does not see the tokens');
  assert.deepEqual(await overflowing(page), [], 'the viewer’s Tokens page fits 800×600');
  assert.deepEqual(errors, []);
});
