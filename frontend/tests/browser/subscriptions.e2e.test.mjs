// Browser test of the Connections page's subscription parts against the real
// headless gateway: import a Claude Code login from a temporary HOME through
// "Import a subscription login", then opt the connection into the usage
// wall's low-priority lane in the edit dialog.
//
//   cd frontend && npm run test:browser     (OMNIROUTE_BIN, CHROMIUM_BIN as in dashboard.e2e)

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

const tmp = mkdtempSync(path.join(os.tmpdir(), 'omniroute-sub-'));
const home = path.join(tmp, 'home');
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
    const env = { ...process.env, HOME: home, OMNIROUTE_DATA_DIR: path.join(tmp, 'data'), OMNIROUTE_HOST: '127.0.0.1', OMNIROUTE_PORT: String(port) };
    for (const k of Object.keys(env)) if (k.startsWith('OMNIROUTE_') && !['OMNIROUTE_DATA_DIR', 'OMNIROUTE_HOST', 'OMNIROUTE_PORT'].includes(k)) delete env[k];
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

test('import a Claude Code login and opt into the slow lane from the Connections page', async () => {
  const credFile = path.join(home, '.claude', '.credentials.json');
  mkdirSync(path.dirname(credFile), { recursive: true });
  writeFileSync(credFile, JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-browser-test-token', refreshToken: 'rt', expiresAt: 4102444800000 } }));
  writeFileSync(path.join(home, '.claude.json'), JSON.stringify({ oauthAccount: { accountUuid: 'acc-b', emailAddress: 'browser@example.com', organizationUuid: 'org-b' } }));
  const before = readFileSync(credFile, 'utf8');
  const g = await startGateway(await freePort());
  const mgmt = async (p) => (await fetch(g.base + p, { headers: { Authorization: `Bearer ${g.token}` } })).json();

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(g.link);
  await page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: 'Connections', exact: true }).click();

  const card = page.getByTestId('import-card');
  await card.getByLabel('Import from').selectOption('claude-code');
  await card.getByRole('button', { name: 'Import login' }).click();
  await card.getByText('Added “Claude Code (browser@example.com)”.').waitFor({ timeout: 10_000 });
  const row = page.getByRole('row', { name: /Claude Code \(browser@example\.com\)/ });
  await row.waitFor({ timeout: 10_000 });
  assert.match(await row.innerText(), /sk-a…oken/, 'the row shows the masked token');
  assert.doesNotMatch(await page.content(), /browser-test-token/, 'the token never reaches the page');
  assert.equal(readFileSync(credFile, 'utf8'), before, 'the CLI file is untouched');

  await row.getByRole('button', { name: /^Edit / }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Low-priority lane').check();
  await dialog.getByRole('button', { name: 'Save changes' }).click();
  await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
  const { connections } = await mgmt('/api/providers');
  const c = connections.find((x) => x.provider === 'claude');
  assert.equal(c.providerSpecificData.lowPriorityMode, true);
  assert.equal(c.providerSpecificData.autoLimitReset, false);
  assert.equal(c.providerSpecificData.accountId, 'acc-b', 'other providerSpecificData keys are kept');
  assert.equal(c.wall.lowPriorityMode, true);
  assert.deepEqual(errors, []);
});
