// Browser test of the Playground and of bodies on demand against the real
// headless gateway and the fake upstream (Debian Chromium, playwright-core):
// a playground request streams live and shows its attempt timeline with a
// failover from a failing connection; capture switched on for one key from
// Logs shows that key's redacted body pair with the translation diff, and
// nothing for another key. Logs rows name their key, tokens and cost; the
// search finds refused rows and a request refused while paused; Replay opens
// the Playground with a captured row's model and messages (issue 42 item 7).
// Nothing overflows at 800×600.
//
//   cd frontend && OMNIROUTE_BIN=../bin/omniroute node --test tests/browser/playground.e2e.test.mjs
//   (FAKEUPSTREAM_BIN, CHROMIUM_BIN as in dashboard.e2e)

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { launchChromium, management, overflowing, startFakeUpstream, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('pg');

test('playground streams with its failover timeline; capture shows one key’s redacted bodies and diff', async () => {
  const fake = (await startFakeUpstream(tmp)).base;
  const gw = await startGateway(tmp);
  const base = gw.base;
  const call = management(base, gw.token);
  const mgmt = async (method, p, body) => {
    const res = await call(method, p, body);
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${p}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const fault = (key, f) => fetch(`${fake}/_fake/faults`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ key, fault: f }) });
  const addConn = (name, key, priority) =>
    mgmt('POST', '/api/providers', { provider: 'openai-compatible', name, authType: 'apikey', apiKey: key, baseUrl: `${fake}/v1`, priority, models: ['gpt-4o-mini'] });
  await addConn('Fake A', 'conn-secret-aaaa', 1);
  await addConn('Fake B', 'conn-secret-bbbb', 2);
  await fault('conn-secret-aaaa', { mode: 'status', status: 401 }); // the first connection fails
  await fault('conn-secret-bbbb', { mode: 'slow_drip', dripMs: 120 }); // the second answers slowly: the stream is seen live

  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, reducedMotion: 'reduce' });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(gw.link);
  const nav = page.getByRole('navigation', { name: 'Dashboard pages' });
  await nav.getByRole('link', { name: 'Playground', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();

  // A streamed request: text appears while it is still running, then the timeline shows the failover.
  await page.getByLabel('Model or combo').fill('openai-compatible/gpt-4o-mini');
  await page.getByLabel('Prompt').fill('hello there');
  await page.getByTestId('pg-send').click();
  const output = page.getByTestId('pg-output');
  await page.waitForFunction(() => {
    const out = document.querySelector('[data-testid="pg-output"]')?.textContent ?? '';
    const sending = document.querySelector('[data-testid="pg-send"]')?.disabled;
    return out.length > 0 && sending;
  });
  const attempts = page.getByTestId('pg-attempt');
  await attempts.nth(1).waitFor();
  assert.equal(await attempts.count(), 2);
  assert.match(await attempts.nth(0).innerText(), /Fake A: auth.*\(401\)/);
  assert.match(await attempts.nth(1).innerText(), /Fake B: success \(200\)/);
  assert.ok((await output.textContent()).length > 5, 'the whole answer is shown');
  const curl = await page.getByTestId('pg-curl').textContent();
  assert.match(curl, /curl -N '.*\/v1\/chat\/completions'/);
  assert.match(curl, /Authorization: Bearer sk-omni-.{4}…'/, 'the key is masked');
  assert.match(curl, /"hello there"/);
  assert.match(await page.getByTestId('pg-key').textContent(), /“playground”/);

  // The Messages format too (translated to the OpenAI upstream), not streamed.
  await page.getByLabel('Client format').selectOption('messages');
  await page.getByLabel('Stream the answer').uncheck();
  await page.getByTestId('pg-send').click();
  await page.getByTestId('pg-status').filter({ hasText: /^200 in/ }).waitFor();
  assert.match(await page.getByTestId('pg-curl').textContent(), /x-api-key: sk-omni-/);

  await page.setViewportSize({ width: 800, height: 600 });
  if (process.env.PG_SHOTS) await page.screenshot({ path: path.join(process.env.PG_SHOTS, 'playground-800.png'), fullPage: true });
  assert.deepEqual(await overflowing(page), [], 'Playground at 800×600');
  await page.setViewportSize({ width: 1280, height: 860 });

  // The playground key is on API Keys, its secret nowhere in the page.
  const keys = (await mgmt('GET', '/api/keys')).keys;
  assert.equal(keys.filter((k) => k.name === 'playground').length, 1);
  await nav.getByRole('link', { name: 'API Keys', exact: true }).click();
  await page.locator('tr', { hasText: 'playground' }).first().waitFor();
  assert.doesNotMatch(await page.content(), /sk-omni-[A-Za-z0-9_-]{12,}/, 'no full key on the Keys page');
  await page.setViewportSize({ width: 800, height: 600 });
  assert.deepEqual(await overflowing(page), [], 'API Keys (with Private) at 800×600');
  await page.setViewportSize({ width: 1280, height: 860 });

  // Capture on for one key, from Logs.
  await fault('conn-secret-bbbb', { mode: 'latency', latencyMs: 1 });
  const captured = await mgmt('POST', '/api/keys', { name: 'captured' });
  const other = await mgmt('POST', '/api/keys', { name: 'other' });
  await nav.getByRole('link', { name: 'Logs', exact: true }).click();
  const card = page.getByTestId('capture-card');
  await card.locator('summary').click();
  await card.getByLabel('Capture bodies').check();
  await card.getByLabel(/^\s*captured$/).check();
  await card.getByRole('button', { name: 'Save capture settings' }).click();
  await page.getByTestId('capture-status').filter({ hasText: /^On for key captured/ }).waitFor();
  await page.setViewportSize({ width: 800, height: 600 });
  assert.deepEqual(await overflowing(page).then((o) => o.filter((x) => !x.startsWith('table') && !x.startsWith('div.table-wrap'))), [], 'capture settings at 800×600');
  await page.setViewportSize({ width: 1280, height: 860 });

  const send = (key) =>
    fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'openai-compatible/gpt-4o-mini',
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: 'my key sk-live-abcdefghijklmnopqrst and conn-secret-bbbb' }],
      }),
    }).then((r) => r.text());
  await send(captured.key);
  await send(other.key);
  await page.getByRole('button', { name: 'Refresh' }).click();
  const rows = page.locator('[data-testid="logs-table"] tbody');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="logs-table"] tbody').length >= 4);
  // The newest two rows: other (no bodies), captured (bodies).
  const withBodies = page.getByTestId('bodies-button');
  await withBodies.first().waitFor();
  assert.equal(await withBodies.count(), 1, 'only the captured key has bodies');
  const otherRows = await rows.count();
  assert.ok(otherRows >= 4);

  await withBodies.first().click();
  const viewer = page.getByTestId('bodies-viewer');
  await viewer.waitFor();
  const clientReq = await viewer.locator('.body-panel').innerText();
  assert.match(clientReq, /\[redacted\]/);
  assert.doesNotMatch(clientReq, /sk-live-abcdefghijklmnopqrst|conn-secret-bbbb/);
  await viewer.getByRole('tab', { name: /Diff/ }).click();
  const diff = page.getByTestId('body-diff');
  assert.ok((await diff.locator('.diff-del').count()) > 0 && (await diff.locator('.diff-add').count()) > 0, 'the translation shows as a diff');
  assert.match(await diff.innerText(), /^\+ .*"stream_options"/m, 'what the gateway added upstream is marked');
  await viewer.getByRole('tab', { name: 'Upstream answer' }).click();
  await viewer.locator('.sse-events li').first().waitFor();
  if (process.env.PG_SHOTS) await page.screenshot({ path: path.join(process.env.PG_SHOTS, 'bodies.png') });
  await page.setViewportSize({ width: 800, height: 600 });
  assert.deepEqual(await overflowing(page).then((o) => o.filter((x) => !x.startsWith('table') && !x.startsWith('div.table-wrap'))), [], 'bodies viewer at 800×600');
  await page.keyboard.press('Escape');
  await viewer.waitFor({ state: 'hidden' });
  await page.setViewportSize({ width: 1280, height: 860 });

  // Issue 42 item 7: each row names its key (never the secret), its tokens in → out and its cost.
  const keyCells = page.getByTestId('log-key');
  assert.equal(await keyCells.filter({ hasText: /^captured$/ }).count(), 1);
  assert.equal(await keyCells.filter({ hasText: /^other$/ }).count(), 1);
  assert.ok((await keyCells.filter({ hasText: /^playground$/ }).count()) >= 2, 'the playground key names its rows');
  const capturedRow = rows.filter({ has: page.getByTestId('bodies-button') }).first();
  assert.match(await capturedRow.getByTestId('log-tokens').innerText(), /^\d[\d,]* → \d[\d,]*$/);
  assert.match(await capturedRow.getByTestId('log-cost').innerText(), /^(\$[\d.,]+|<\$0\.0001|—)$/);
  assert.doesNotMatch(await page.locator('[data-testid="logs-table"]').innerText(), /sk-omni-/, 'no key secret in the table');
  assert.deepEqual(await overflowing(page), [], 'Logs with Key, Tokens and Cost at 1280×860');

  // A request refused before dispatch (no such model) and one refused while the gateway is paused: both logged, both found by the search.
  const chatAs = (key, model) =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
  assert.ok((await chatAs(other.key, 'nowhere/no-such-model')).status >= 400);
  await mgmt('PATCH', '/api/gateway', { paused: true });
  assert.equal((await chatAs(other.key, 'openai-compatible/gpt-4o-mini')).status, 503);
  await mgmt('PATCH', '/api/gateway', { paused: false });
  for (let i = 0; i < 50 && (await mgmt('GET', '/api/logs?q=refused')).logs.length < 2; i++) await new Promise((r) => setTimeout(r, 200));
  const search = page.getByLabel('Search');
  await search.fill('refused');
  await search.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="logs-table"] tbody').length === 2);
  assert.equal(await rows.filter({ hasText: 'not sent (refused)' }).count(), 2, 'both refused rows are found');
  await search.fill('paused');
  await search.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="logs-table"] tbody').length === 1);
  assert.equal(await rows.first().getByTestId('log-key').innerText(), 'other');
  assert.match(await rows.first().innerText(), /503/);
  assert.match(await rows.first().innerText(), /GATEWAY_PAUSED/);
  await page.setViewportSize({ width: 800, height: 600 });
  assert.deepEqual(await overflowing(page), [], 'Logs search results at 800×600');
  await page.setViewportSize({ width: 1280, height: 860 });

  // Replay in Playground: the captured row's model, format and messages (as captured: redacted) prefilled; it sends.
  await search.fill('');
  await search.press('Enter');
  await page.getByTestId('bodies-button').first().waitFor();
  await rows.filter({ has: page.getByTestId('bodies-button') }).first().getByTestId('replay-button').click();
  await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();
  assert.equal(await page.getByLabel('Model or combo').inputValue(), 'openai-compatible/gpt-4o-mini');
  await page.getByTestId('pg-replay').filter({ hasText: /^Replaying a logged request/ }).waitFor();
  assert.equal(await page.getByLabel('Client format').inputValue(), 'messages');
  const replayed = await page.getByLabel('Prompt').inputValue();
  assert.match(replayed, /^my key .*\[redacted\]/);
  assert.doesNotMatch(replayed, /sk-live-abcdefghijklmnopqrst/);
  assert.match(await page.getByTestId('pg-curl').textContent(), /"max_tokens":50/);
  await page.getByTestId('pg-send').click();
  await page.getByTestId('pg-status').filter({ hasText: /^200 in/ }).waitFor();
  await page.setViewportSize({ width: 800, height: 600 });
  assert.deepEqual(await overflowing(page), [], 'replayed Playground at 800×600');
  assert.deepEqual(errors, []);
});
