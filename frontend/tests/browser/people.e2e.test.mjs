// Browser test of issue 34's people: with users on the gateway the dashboard
// asks for an email and password (the session is an HttpOnly cookie), the
// Audit Log page lists the management writes with filters and paging and
// never a secret, the Keys page shows a key's owner, the nav follows the
// role, and the new pages fit an 800×600 window. Real headless gateway
// (SQLite), Debian's Chromium.
//
//   cd frontend && OMNIROUTE_BIN=../bin/omniroute node --test tests/browser/people.e2e.test.mjs

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChromium, management, overflowing as overflowingNow, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('people');

/** Elements sticking out sideways at 800×600. */
async function overflowing(page) {
  await page.setViewportSize({ width: 800, height: 600 });
  await page.waitForTimeout(100); // a layout pass
  const out = await overflowingNow(page);
  await page.setViewportSize({ width: 1280, height: 800 });
  return out;
}

test('sign in as a user, read the audit log, see key owners, nav by role', async () => {
  const g = await startGateway(tmp);
  const mgmt = management(g.base, g.token);
  const ada = await mgmt('POST', '/api/users', { email: 'ada@example.com', name: 'Ada', role: 'admin', password: 'ada-password-1' });
  assert.equal(ada.status, 201);
  assert.equal((await mgmt('POST', '/api/users', { email: 'otto@example.com', role: 'operator', password: 'otto-password-1' })).status, 201);
  assert.equal((await mgmt('POST', '/api/keys', { name: 'ada-laptop', ownerUserId: ada.body.user.id })).status, 201);
  // A write carrying a secret, then enough writes for a second page.
  assert.equal((await mgmt('POST', '/api/providers', { provider: 'openai-compatible', name: 'up', apiKey: 'sk-browser-SECRET-42', baseUrl: 'http://127.0.0.1:9/v1', models: ['m'] })).status < 500, true);
  for (let i = 0; i < 52; i++) assert.equal((await mgmt('PATCH', '/api/gateway', { paused: false })).status, 200);

  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  // Users exist: the sign-in page asks for an email and password.
  await page.goto(`${g.base}/dashboard/`);
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Password', { exact: true }).fill('wrong-password!');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByText('wrong email or password').waitFor({ timeout: 10_000 });
  await page.getByLabel('Password', { exact: true }).fill('ada-password-1');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const nav = page.getByRole('navigation', { name: 'Dashboard pages' });
  await nav.getByRole('link', { name: 'Users', exact: true }).waitFor({ timeout: 10_000 });
  const cookie = (await context.cookies()).find((c) => c.name === 'omniroute_session');
  assert.ok(cookie, 'a session cookie');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(await page.evaluate(() => localStorage.getItem('omniroute.token')), null, 'no token stored for a user');

  // The Audit Log page: newest first, no secret, filters and paging.
  await nav.getByRole('link', { name: 'Audit Log', exact: true }).click();
  const rows = page.locator('table.audit-table tbody tr');
  await rows.first().waitFor({ timeout: 10_000 });
  assert.match(await rows.first().innerText(), /ada@example\.com[\s\S]*ada@example\.com signed in\./);
  assert.equal(await rows.count(), 50);
  assert.doesNotMatch(await page.content(), /SECRET-42|ada-password/, 'no secret on the page');
  assert.deepEqual(await overflowing(page), [], 'the Audit Log page fits 800×600');
  await page.getByRole('button', { name: 'Older' }).click();
  // Issue 42: each entry is a sentence naming its target, never the route or the JSON body.
  await page.locator('table.audit-table tbody tr', { hasText: 'The management token added the connection up.' }).waitFor({ timeout: 10_000 });
  assert.doesNotMatch(await page.locator('table.audit-table').innerText(), /\/api\/|\{"|\[redacted\]/);
  await page.getByRole('button', { name: 'Newest' }).click();
  await page.getByLabel('Actor').fill('ada@');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  // Her sign-in, and the refused one before it (401).
  await page.waitForFunction(() => document.querySelectorAll('table.audit-table tbody tr').length === 2, null, { timeout: 10_000 });
  assert.match(await rows.nth(0).innerText(), /signed in\.\s+Done/);
  assert.match(await rows.nth(1).innerText(), /could not sign in[^\n]*\s+Refused/);
  await page.getByLabel('Actor').fill('');
  await page.getByLabel('Action').fill('/api/users');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForFunction(() => document.querySelectorAll('table.audit-table tbody tr').length === 2, null, { timeout: 10_000 });

  // Users page: both people, fits the window.
  await nav.getByRole('link', { name: 'Users', exact: true }).click();
  await page.getByRole('row', { name: /otto@example\.com/ }).waitFor({ timeout: 10_000 });
  assert.deepEqual(await overflowing(page), [], 'the Users page fits 800×600');

  // Keys page: the owner column.
  await nav.getByRole('link', { name: 'API Keys', exact: true }).click();
  const keyRow = page.getByRole('row', { name: /ada-laptop/ });
  await keyRow.waitFor({ timeout: 10_000 });
  assert.equal((await keyRow.getByTestId('key-owner').innerText()).trim(), 'ada@example.com');

  // Sign out, then an operator: no Users page, the Audit Log is there.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Email', { exact: true }).waitFor({ timeout: 10_000 });
  assert.equal((await context.cookies()).some((c) => c.name === 'omniroute_session' && c.value), false, 'the cookie is gone');
  await page.getByLabel('Email', { exact: true }).fill('otto@example.com');
  await page.getByLabel('Password', { exact: true }).fill('otto-password-1');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await nav.getByRole('link', { name: 'Audit Log', exact: true }).waitFor({ timeout: 10_000 });
  assert.equal(await nav.getByRole('link', { name: 'Users', exact: true }).isVisible(), false, 'an operator has no Users page');
  const audit = await mgmt('GET', '/api/audit?action=logout');
  assert.equal(audit.body.entries[0].actor, 'ada@example.com', 'the sign-out is in the audit log');
  assert.deepEqual(errors, []);
});
