// Browser test of what keys cost (issue 31, docs/COST.md) against the real
// headless gateway and the fake upstream: a key created with a budget on the
// Keys page shows its spend against it as a meter (warn from 80 %, refused at
// 100 %), its budget edited in its dialog; the Usage page shows spend per
// bucket, the spend total and what a flat-rate connection saved; neither page
// overflows at 800×600.
//
//   cd frontend && node --test tests/browser/spend.e2e.test.mjs   (env as in dashboard.e2e)

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChromium, management, overflowing, snap, startFakeUpstream, startGateway, tempDir } from './harness.mjs';

test('the Keys meter and the Usage spend chart', async () => {
  const tmp = tempDir('spend');
  const fake = (await startFakeUpstream(tmp)).base;
  const g = await startGateway(tmp);
  const base = g.base;
  const mgmt = management(base, g.token);
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

  const browser = await launchChromium();
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
  // The refusal names the key, the budget, what was spent and what is held (issue 42).
  assert.match(refused.body.error.message, /API key "ci" has reached its day budget of \$0\.\d{4}: \$0\.\d{4} spent, \$0\.0000 held by 0 request\(s\) in flight/);

  // A model no connection has a price for is refused under the USD budget, naming the model and the fix…
  const free = await mgmt('POST', '/api/providers', {
    provider: 'openai-compatible', name: 'Free box', authType: 'apikey', apiKey: 'key-free', baseUrl: `${fake}/v1`, priority: 2, models: ['m-free'], verify: false,
  });
  assert.equal(free.status, 201, JSON.stringify(free.body));
  const chatModel = async (key, model) => {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: res.status, body: await res.json() };
  };
  const unpriced = await chatModel(value, 'm-free');
  assert.equal(unpriced.status, 403, JSON.stringify(unpriced.body));
  assert.equal(unpriced.body.error.code, 'MODEL_PRICE_UNKNOWN');
  assert.match(unpriced.body.error.message, /"m-free" has no known price on connection "Free box".*"ci".*set its price/);
  // …unless the key says otherwise: the Budget dialog's box (then only the spent budget refuses it).
  await row.getByRole('button', { name: 'Edit budget of key ci' }).click();
  await dialog.locator('#edit-budget-allow-unpriced').check();
  await dialog.getByRole('button', { name: 'Save budget' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal((await mgmt('GET', '/api/keys')).body.keys.find((k) => k.name === 'ci').budget.allowUnpriced, true);
  assert.equal((await chatModel(value, 'm-free')).body.error.code, 'KEY_BUDGET_EXCEEDED');

  // Held beside spent: a key whose requests in flight hold part of its spend reads so on its meter.
  await page.route('**/api/keys', async (route) => {
    const res = await route.fetch();
    const json = await res.json();
    for (const k of json.keys ?? []) if (k.name === 'ci') k.spend = { ...k.spend, usd: budget * 0.6, heldUsd: budget * 0.4, inFlight: 2 };
    await route.fulfill({ response: res, json });
  });
  await page.getByRole('button', { name: 'Refresh' }).click();
  await row.getByTestId('key-spend-held').filter({ hasText: /^2 requests in flight hold \$0\.\d{4}$/ }).waitFor();
  assert.match(await row.getByTestId('key-spend').innerText(), /60 % · \$0\.\d{4} spent \+ \$0\.\d{4} held of \$0\.\d{4} today/);
  await page.unroute('**/api/keys');

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
    const over = await overflowing(page);
    await snap(page, `spend${route.replace('/', '-')}-800x600`);
    assert.deepEqual(over, [], `${title} overflows at 800×600`);
  }
  assert.deepEqual(errors, []);
});
