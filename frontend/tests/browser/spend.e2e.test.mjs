// Browser test of what keys cost (issue 31, docs/COST.md) against the real
// headless gateway and the fake upstream: a key created with a budget on the
// Keys page shows its spend against it as a meter (warn from 80 %, refused at
// 100 %), its budget edited in its dialog; the Usage page shows spend per
// bucket, the spend total and what a flat-rate connection saved; neither page
// overflows at 800×600.
//
//   cd frontend && node --test tests/browser/spend.e2e.test.mjs   (env as in dashboard.e2e)

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const FRONTEND = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REPO = path.resolve(FRONTEND, '..');
const GATEWAY_BIN = path.resolve(FRONTEND, process.env.OMNIROUTE_BIN || '../bin/omniroute');
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const ARTIFACTS = path.resolve(FRONTEND, process.env.E2E_ARTIFACTS || '../tests/e2e/artifacts');

const tmp = mkdtempSync(path.join(os.tmpdir(), 'omniroute-spend-'));
const children = new Set();
let browser;
after(async () => {
  await browser?.close().catch(() => {});
  for (const c of children) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
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

/** Starts a process and resolves with the first stdout line matching re. */
function start(bin, args, env, re) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    child.on('exit', () => children.delete(child));
    const timer = setTimeout(() => reject(new Error(`${bin} did not start`)), 20_000);
    child.stderr.resume();
    const seen = [];
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      seen.push(line);
      const m = re(seen);
      if (m && timer) {
        clearTimeout(timer);
        resolve(m);
      }
    });
  });
}

test('the Keys meter and the Usage spend chart', async () => {
  const fakeBin = path.join(tmp, 'fakeupstream');
  execFileSync('go', ['build', '-o', fakeBin, './tests/cmd/fakeupstream'], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
  const [, fake] = await start(fakeBin, ['-addr', '127.0.0.1:0'], process.env, (l) => l[0]?.match(/listening on (http:\/\/\S+)/));
  const port = await freePort();
  const env = { ...process.env, HOME: path.join(tmp, 'home'), OMNIROUTE_DATA_DIR: path.join(tmp, 'data'), OMNIROUTE_HOST: '127.0.0.1', OMNIROUTE_PORT: String(port) };
  for (const k of Object.keys(env)) if (k.startsWith('OMNIROUTE_') && !['OMNIROUTE_DATA_DIR', 'OMNIROUTE_HOST', 'OMNIROUTE_PORT'].includes(k)) delete env[k];
  const g = await start(GATEWAY_BIN, ['--headless'], env, (lines) => {
    const key = lines.map((l) => l.match(/^\s*API key:\s+(sk-omni-\S+)/)).find(Boolean);
    const dash = lines.map((l) => l.match(/^\s*Dashboard:\s+(http:\/\/\S+#token=(\S+))/)).find(Boolean);
    return key && dash ? { key: key[1], link: dash[1], token: decodeURIComponent(dash[2]) } : null;
  });
  const base = `http://127.0.0.1:${port}`;
  const mgmt = async (method, p, body) => {
    const res = await fetch(base + p, { method, headers: { Authorization: `Bearer ${g.token}`, 'Content-Type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: await res.json() };
  };
  const chat = async (key) => {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: res.status, body: await res.json() };
  };

  const created = await mgmt('POST', '/api/providers', {
    provider: 'openai-compatible', name: 'Metered', authType: 'apikey', apiKey: 'key-a', baseUrl: `${fake}/v1`, priority: 1, models: ['gpt-4o-mini'],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const connId = created.body.connection.id;
  // 1,000 $/MTok in and out: the fake's answer (10 prompt + N output tokens) costs cents.
  const priced = await mgmt('PATCH', `/api/providers/${connId}`, { pricing: { 'gpt-4o-mini': { inputPerMTok: 1000, outputPerMTok: 1000 } } });
  assert.equal(priced.status, 200, JSON.stringify(priced.body));

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const nav = (label) => page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: label, exact: true }).click();
  await page.goto(g.link);

  // Create a key with a budget through the form.
  await nav('API Keys');
  await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
  await page.locator('#key-name').fill('ci', { timeout: 5000 }).catch((e) => {
    throw new Error(`${e.message}\npage errors: ${errors.join('\n')}`);
  });
  await page.locator('#new-budget-usd').fill('abc');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByText('The USD budget must be a number of dollars').waitFor();
  await page.locator('#new-budget-usd').fill('1');
  await page.locator('#new-budget-period').selectOption('day');
  await page.getByRole('button', { name: 'Create key' }).click();
  const value = await page.locator('#new-key-value').inputValue();
  assert.match(value, /^sk-omni-/);
  const { body: list } = await mgmt('GET', '/api/keys');
  const key = list.keys.find((k) => k.name === 'ci');
  assert.deepEqual(key.budget, { usd: 1, period: 'day' });

  // One request: what it cost sets the budget the meter is read against.
  const first = await chat(value);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const perRequest = (first.body.usage.prompt_tokens * 1000 + first.body.usage.completion_tokens * 1000) / 1e6;
  const row = page.locator(`tr[data-key-id="${key.id}"]`);
  // A budget a hair under 5 requests (sums of floats are not exact): 4 served = 80 %.
  const budget = Number((perRequest * 5 * 0.9999).toFixed(9));
  await row.getByRole('button', { name: 'Edit budget of key ci' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.locator('#edit-budget-usd').fill(String(budget));
  await dialog.locator('#edit-limit-rpm').fill('600');
  await dialog.getByRole('button', { name: 'Save budget' }).click();
  await dialog.waitFor({ state: 'hidden' });
  for (let i = 0; i < 3; i++) assert.equal((await chat(value)).status, 200);
  await page.getByRole('button', { name: 'Refresh' }).click();
  const meter = row.getByTestId('key-spend-meter');
  await page
    .waitForFunction((id) => document.querySelector(`tr[data-key-id="${id}"] [data-testid="key-spend-meter"]`)?.getAttribute('data-level') === 'warn', key.id, { timeout: 10_000 })
    .catch(async (e) => {
      throw new Error(`${e.message}\nkeys: ${JSON.stringify((await mgmt('GET', '/api/keys')).body)}\nrow: ${await row.innerText()}\nerrors: ${errors}`);
    });
  assert.equal(await meter.getAttribute('aria-valuenow'), '80');
  assert.match(await row.getByTestId('key-spend').innerText(), /80 % · \$0\.\d{4} of \$0\.\d{4} today/);
  assert.match(await row.getByTestId('key-spend').innerText(), /600 req\/min/);
  const fill = await meter.locator('.spend-meter-fill').evaluate((el) => el.style.width);
  assert.ok(Math.abs(parseFloat(fill) - 80) < 0.1, `the bar is ${fill} full, want 80 %`);

  // The request that crosses the budget is served; the next is refused and the meter says so.
  assert.equal((await chat(value)).status, 200);
  const refused = await chat(value);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, 'KEY_BUDGET_EXCEEDED');
  await page.getByRole('button', { name: 'Refresh' }).click();
  await page.waitForFunction((id) => document.querySelector(`tr[data-key-id="${id}"] [data-testid="key-spend-meter"]`)?.getAttribute('data-level') === 'bad', key.id);
  assert.match(await row.getByTestId('key-spend').innerText(), /100 %.*refused/s);

  // A flat-rate connection: its answers cost nothing and are saved.
  assert.equal((await mgmt('PATCH', `/api/providers/${connId}`, { flatRate: true })).status, 200);
  assert.equal((await chat(g.key)).status, 200);

  // The Usage page: spend total, saved by subscriptions, the spend chart per key.
  let usage;
  for (let i = 0; i < 50; i++) {
    usage = (await mgmt('GET', '/api/usage?range=hour&by=key')).body;
    if (usage.totals.savedUsd > 0 && usage.totals.requests >= 7) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(Math.abs(usage.totals.costUsd - 5 * perRequest) < 1e-9, `costUsd ${usage.totals.costUsd}, want ${5 * perRequest}`);
  assert.ok(Math.abs(usage.totals.savedUsd - perRequest) < 1e-9, `savedUsd ${usage.totals.savedUsd}`);
  await page.goto(`${base}/#/usage?range=hour&by=key`);
  await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
  const totals = page.getByTestId('usage-totals');
  await totals.waitFor();
  const fmt = (n) => `$${n.toLocaleString('en-US', { minimumFractionDigits: 4, maximumFractionDigits: 4 })}`;
  assert.match(await totals.innerText(), new RegExp(`Spend\\s*\\${fmt(usage.totals.costUsd)}`, 'i'));
  assert.match(await totals.innerText(), new RegExp(`Saved by subscriptions\\s*\\${fmt(usage.totals.savedUsd)}`, 'i'));
  const chart = page.getByTestId('chart-spend');
  assert.match(await chart.innerText(), /Spend/i);
  const bars = chart.locator('svg rect');
  assert.ok((await bars.count()) >= 1, 'the spend chart draws the spend');
  const titles = await bars.evaluateAll((rs) => rs.map((r) => r.querySelector('title')?.textContent ?? ''));
  assert.ok(titles.some((t) => t.startsWith('ci: $')), `bar titles ${titles}`);
  assert.match(await chart.getByTestId('y-axis').innerText(), /¢|\$/);
  const table = page.locator('table.table-cards');
  assert.match(await table.innerText(), /Spend\s+Saved/i);

  // Neither page overflows sideways at 800×600.
  await page.setViewportSize({ width: 800, height: 600 });
  for (const [route, title] of [['/keys', 'API Keys'], ['/usage', 'Usage']]) {
    await page.goto(`${base}/#${route}`);
    await page.getByRole('heading', { level: 1, name: title }).waitFor();
    await page.waitForTimeout(300);
    const over = await page.evaluate(() => {
      const out = [];
      const doc = document.scrollingElement;
      if (doc.scrollWidth > doc.clientWidth) out.push(`document ${doc.scrollWidth} > ${doc.clientWidth}`);
      for (const el of document.querySelectorAll('body *')) {
        if (el.closest('.visually-hidden, svg, [hidden], dialog:not([open]), .skip-link, thead')) continue;
        const cs = getComputedStyle(el);
        if (cs.display === 'inline' || cs.display === 'none' || el.clientWidth === 0) continue;
        if (el.scrollWidth > el.clientWidth + 1) out.push(`${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth} > ${el.clientWidth}`);
      }
      return out;
    });
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `spend${route.replace('/', '-')}-800x600.png`), fullPage: true });
    assert.deepEqual(over, [], `${title} overflows at 800×600`);
  }
  assert.deepEqual(errors, []);
});
