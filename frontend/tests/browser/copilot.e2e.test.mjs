// Browser test of "Sign in to GitHub Copilot" on the Connections page against
// the real headless gateway and a fake GitHub (device flow, user, Copilot
// token exchange, the Copilot endpoint's model list): the card shows the
// code and the page to enter it on, waits, and adds the connection once the
// login is approved on "GitHub"; nothing overflows at 800×600.
//
//   cd frontend && npm run test:browser     (OMNIROUTE_BIN, CHROMIUM_BIN as in dashboard.e2e)

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
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
const CLIENT_ID = 'Iv1.browser';
const GITHUB_TOKEN = 'gho_browser_token';
const USER_CODE = 'BRWS-1234';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'omniroute-copilot-'));
let gateway;
let browser;
let fake;
after(async () => {
  await browser?.close();
  if (gateway && gateway.exitCode === null) gateway.kill('SIGKILL');
  fake?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A fake GitHub + Copilot: pending until approve(), then the token. */
function startFakeGitHub() {
  const state = { approved: false, polls: 0, exchanges: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = (status, v) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      const form = new URLSearchParams(body);
      const base = `http://127.0.0.1:${server.address().port}`;
      const github = req.headers.authorization === `token ${GITHUB_TOKEN}`;
      if (req.method === 'POST' && req.url === '/login/device/code' && form.get('client_id') === CLIENT_ID) {
        return json(200, { device_code: 'dc-browser', user_code: USER_CODE, verification_uri: `${base}/login/device`, expires_in: 900, interval: 1 });
      }
      if (req.method === 'POST' && req.url === '/login/oauth/access_token' && form.get('device_code') === 'dc-browser') {
        state.polls++;
        return json(200, state.approved ? { access_token: GITHUB_TOKEN, token_type: 'bearer', scope: 'read:user' } : { error: 'authorization_pending' });
      }
      if (req.method === 'GET' && req.url === '/user' && github) return json(200, { login: 'octo-browser', id: 77 });
      if (req.method === 'GET' && req.url === '/copilot_internal/v2/token' && github) {
        state.exchanges++;
        return json(200, { token: `cpt-${state.exchanges}`, expires_at: Math.floor(Date.now() / 1000) + 1800, refresh_in: 1500, endpoints: { api: base } });
      }
      if (req.method === 'GET' && req.url === '/models' && req.headers['copilot-integration-id'] === 'vscode-chat') {
        return json(200, { object: 'list', data: [{ id: 'gpt-4o', object: 'model' }, { id: 'claude-sonnet-4', object: 'model' }] });
      }
      json(404, { message: 'Not Found' });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, state, close: () => server.close() })));
}

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

function startGateway(port, fakeBase) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, HOME: tmp, OMNIROUTE_DATA_DIR: path.join(tmp, 'data'), OMNIROUTE_HOST: '127.0.0.1', OMNIROUTE_PORT: String(port) };
    for (const k of Object.keys(env)) if (k.startsWith('OMNIROUTE_') && !['OMNIROUTE_DATA_DIR', 'OMNIROUTE_HOST', 'OMNIROUTE_PORT'].includes(k)) delete env[k];
    Object.assign(env, {
      OMNIROUTE_GITHUB_COPILOT_OAUTH_DEVICE_CODE_URL: `${fakeBase}/login/device/code`,
      OMNIROUTE_GITHUB_COPILOT_OAUTH_ACCESS_TOKEN_URL: `${fakeBase}/login/oauth/access_token`,
      OMNIROUTE_GITHUB_COPILOT_OAUTH_USER_URL: `${fakeBase}/user`,
      OMNIROUTE_GITHUB_COPILOT_OAUTH_TOKEN_URL: `${fakeBase}/copilot_internal/v2/token`,
      OMNIROUTE_GITHUB_COPILOT_OAUTH_CLIENT_ID: CLIENT_ID,
    });
    gateway = spawn(GATEWAY_BIN, ['--headless'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => reject(new Error('gateway did not start')), 15_000);
    gateway.on('exit', (code) => reject(new Error(`gateway exited (${code})`)));
    const rl = readline.createInterface({ input: gateway.stdout });
    rl.on('line', (line) => {
      const m = line.match(/^\s*Dashboard:\s+(http:\/\/\S+#token=(\S+))/);
      if (m) {
        clearTimeout(timer);
        resolve({ link: m[1], token: m[2], base: `http://127.0.0.1:${port}` });
      }
    });
    gateway.stderr.resume();
  });
}

test('sign in to GitHub Copilot from the Connections page', async () => {
  fake = await startFakeGitHub();
  const fakeBase = `http://127.0.0.1:${fake.server.address().port}`;
  const g = await startGateway(await freePort(), fakeBase);
  const mgmt = async (p) => (await fetch(g.base + p, { headers: { Authorization: `Bearer ${g.token}` } })).json();

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(g.link);
  await page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: 'Connections', exact: true }).click();

  const card = page.getByTestId('copilot-card');
  await card.getByTestId('copilot-start').click();
  await assert.doesNotReject(card.getByTestId('copilot-code').waitFor());
  assert.equal(await card.getByTestId('copilot-code').textContent(), USER_CODE);
  assert.equal(await card.getByTestId('copilot-uri').getAttribute('href'), `${fakeBase}/login/device`);
  assert.equal(await card.getByTestId('copilot-start').isDisabled(), true);

  // Nothing wider than an 800 px window while the code is shown.
  await page.setViewportSize({ width: 800, height: 600 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page overflows by ${overflow}px at 800×600`);

  // Approved on "GitHub" once the gateway has asked at least once.
  const t0 = Date.now();
  while (fake.state.polls === 0 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
  assert.ok(fake.state.polls > 0, 'the gateway never polled GitHub');
  fake.state.approved = true;
  await card.getByTestId('copilot-status').getByText('Added “GitHub Copilot (octo-browser)”.').waitFor({ timeout: 15_000 });
  assert.equal(await card.getByTestId('copilot-start').isDisabled(), false);

  const { connections } = await mgmt('/api/providers');
  assert.equal(connections.length, 1);
  assert.equal(connections[0].provider, 'github-copilot');
  assert.equal(connections[0].baseUrl, fakeBase);
  assert.deepEqual([...connections[0].servedModels].sort(), ['claude-sonnet-4', 'gpt-4o']);
  assert.ok(!JSON.stringify(connections[0]).includes(GITHUB_TOKEN), 'the GitHub token is returned by the API');
  // The list shows the new connection.
  await page.getByRole('cell', { name: /GitHub Copilot \(octo-browser\)/ }).first().waitFor({ timeout: 5_000 });
  assert.deepEqual(errors, []);
});
