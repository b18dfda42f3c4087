// Browser test of issue 34's people: with users on the gateway the dashboard
// asks for an email and password (the session is an HttpOnly cookie), the
// Audit Log page lists the management writes with filters and paging and
// never a secret, the Keys page shows a key's owner, the nav follows the
// role, and the new pages fit an 800×600 window. Real headless gateway
// (SQLite), Debian's Chromium.
//
//   cd frontend && OMNIROUTE_BIN=../bin/omniroute node --test tests/browser/people.e2e.test.mjs

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const FRONTEND = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GATEWAY_BIN = path.resolve(FRONTEND, process.env.OMNIROUTE_BIN || '../bin/omniroute');
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'omniroute-people-'));
let gateway;
let browser;
after(async () => {
  await browser?.close();
  if (gateway && gateway.exitCode === null) gateway.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function startGateway(port) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, HOME: path.join(tmp, 'home'), OMNIROUTE_DATA_DIR: path.join(tmp, 'data'), OMNIROUTE_HOST: '127.0.0.1', OMNIROUTE_PORT: String(port) };
    for (const k of Object.keys(env)) if (k.startsWith('OMNIROUTE_') && !['OMNIROUTE_DATA_DIR', 'OMNIROUTE_HOST', 'OMNIROUTE_PORT'].includes(k)) delete env[k];
    gateway = spawn(GATEWAY_BIN, ['--headless'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => reject(new Error('gateway did not start')), 15_000);
    gateway.on('exit', (code) => reject(new Error(`gateway exited (${code})`)));
    readline.createInterface({ input: gateway.stdout }).on('line', (line) => {
      const m = line.match(/^\s*Dashboard:\s+(http:\/\/\S+#token=(\S+))/);
      if (m) {
        clearTimeout(timer);
        resolve({ token: m[2], base: `http://127.0.0.1:${port}` });
      }
    });
    gateway.stderr.resume();
  });
}

/** Elements whose content sticks out sideways (scrollWidth > clientWidth) at 800×600, page included. */
async function overflowing(page) {
  await page.setViewportSize({ width: 800, height: 600 });
  await page.waitForTimeout(100); // a layout pass
  const out = await overflowingNow(page);
  await page.setViewportSize({ width: 1280, height: 800 });
  return out;
}

async function overflowingNow(page) {
  return page.evaluate(() => {
    const out = [];
    const doc = document.scrollingElement;
    if (doc.scrollWidth > doc.clientWidth) out.push(`document ${doc.scrollWidth} > ${doc.clientWidth}`);
    for (const el of document.querySelectorAll('body *')) {
      if (el.closest('.visually-hidden, svg, [hidden], dialog:not([open]), .skip-link, thead')) continue;
      const cs = getComputedStyle(el);
      if (cs.display === 'inline' || cs.display === 'none' || el.clientWidth === 0) continue;
      if (el.scrollWidth > el.clientWidth + 1) out.push(`${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth} > ${el.clientWidth}: ${(el.textContent ?? '').trim().slice(0, 60)}`);
    }
    return out;
  });
}

test('sign in as a user, read the audit log, see key owners, nav by role', async () => {
  const g = await startGateway(await freePort());
  const mgmt = async (method, p, body) => {
    const res = await fetch(g.base + p, {
      method,
      headers: { Authorization: `Bearer ${g.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() };
  };
  const ada = await mgmt('POST', '/api/users', { email: 'ada@example.com', name: 'Ada', role: 'admin', password: 'ada-password-1' });
  assert.equal(ada.status, 201);
  assert.equal((await mgmt('POST', '/api/users', { email: 'otto@example.com', role: 'operator', password: 'otto-password-1' })).status, 201);
  assert.equal((await mgmt('POST', '/api/keys', { name: 'ada-laptop', ownerUserId: ada.body.user.id })).status, 201);
  // A write carrying a secret, then enough writes for a second page.
  assert.equal((await mgmt('POST', '/api/providers', { provider: 'openai-compatible', name: 'up', apiKey: 'sk-browser-SECRET-42', baseUrl: 'http://127.0.0.1:9/v1', models: ['m'] })).status < 500, true);
  for (let i = 0; i < 52; i++) assert.equal((await mgmt('PATCH', '/api/gateway', { paused: false })).status, 200);

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
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
  assert.match(await rows.first().innerText(), /ada@example\.com[\s\S]*POST \/api\/login/);
  assert.equal(await rows.count(), 50);
  assert.doesNotMatch(await page.content(), /SECRET-42|ada-password/, 'no secret on the page');
  assert.deepEqual(await overflowing(page), [], 'the Audit Log page fits 800×600');
  await page.getByRole('button', { name: 'Older' }).click();
  await page.locator('table.audit-table tbody tr', { hasText: 'POST /api/providers' }).waitFor({ timeout: 10_000 });
  assert.match(await page.locator('table.audit-table').innerText(), /\[redacted\]/);
  await page.getByRole('button', { name: 'Newest' }).click();
  await page.getByLabel('Actor').fill('ada@');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  // Her sign-in, and the refused one before it (401).
  await page.waitForFunction(() => document.querySelectorAll('table.audit-table tbody tr').length === 2, null, { timeout: 10_000 });
  assert.match(await rows.nth(0).innerText(), /POST \/api\/login\s+200/);
  assert.match(await rows.nth(1).innerText(), /POST \/api\/login\s+401/);
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
