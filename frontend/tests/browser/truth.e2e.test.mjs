// Browser test of issue 42 items 5, 6 and 8 on a mixed state built through
// the API against the real gateway binary and the fake upstream: a wrong key,
// a base URL answering 404, a closed port, a 429-ing connection, a serving
// one; a combo dead for good and one dead for a while; a refused request.
//
//   item 5: fixes fit the state (never Unlock models for an unreachable or
//           404 connection), name their connection in a dead combo's card,
//           and a viewer sees them disabled with the reason (no 403); Logs
//           rows and Playground answers offer the fix and a link.
//   item 6: the status line, the tiles, the live feed and the provider rows
//           agree; a dead combo whose targets never come back says so.
//   item 8: no 32-hex id or raw body on the pages; the Audit Log in
//           sentences; the Playground says "served by <connection name>".
//
//   cd frontend && node --test tests/browser/truth.e2e.test.mjs

import assert from 'node:assert/strict';
import { freePort, launchChromium, management, overflowing, snap as snapPage, startFakeUpstream, startGateway, stepper, tempDir } from './harness.mjs';

const STEP_TIMEOUT = 15_000;
const HEX_ID = /\b[0-9a-f]{32}\b/;
const S = { base: '', token: '', fake: '', key: '', browser: null, page: null, ids: {}, errors: [] };
const step = stepper('truth', () => S.page);
const snap = (name) => snapPage(S.page, name);
const mgmt = (method, p, body) => management(S.base, S.token)(method, p, body);

async function chat(model) {
  const res = await fetch(`${S.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${S.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
  });
  return { status: res.status, body: await res.text() };
}

async function fault(key, f) {
  const res = await fetch(`${S.fake}/_fake/faults`, { method: 'POST', body: JSON.stringify({ key, fault: f }) });
  assert.equal(res.status, 204, await res.text());
}

async function open(page, route, title) {
  await page.goto(`${S.base}/dashboard/#${route}`);
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
}

/** The health model's summary, as the API gives it. */
async function summary() {
  const h = await mgmt('GET', '/api/monitoring/health');
  assert.equal(h.status, 200);
  return h.body.summary;
}

step('start the fake upstream, the gateway and Chromium', async () => {
  const tmp = tempDir('truth');
  S.fake = (await startFakeUpstream(tmp)).base;
  const gw = await startGateway(tmp);
  Object.assign(S, { base: gw.base, token: gw.token, key: gw.key, link: gw.link });
  S.browser = await launchChromium();
  const context = await S.browser.newContext({ viewport: { width: 1280, height: 860 }, reducedMotion: 'reduce' });
  context.setDefaultTimeout(STEP_TIMEOUT);
  S.page = await context.newPage();
  S.page.on('pageerror', (err) => S.errors.push(err.message));
  await S.page.goto(gw.link);
  await S.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
});

step('build the mixed state: wrong key, 404 base URL, closed port, cooling, serving; two dead combos; a refusal', async () => {
  await fault('bad-key', { mode: 'status', status: 401 });
  const closed = `http://127.0.0.1:${await freePort()}/v1`;
  const add = async (name, body) => {
    const r = await mgmt('POST', '/api/providers', { name, ...body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    S.ids[name] = r.body.connection.id;
  };
  // Every Add runs the reach / auth / completion check (item 1): these land in their states.
  await add('Work OpenAI', { provider: 'openai-compatible', apiKey: 'bad-key', baseUrl: `${S.fake}/v1`, prefix: 'work', models: ['gpt-4o-mini'] });
  await add('No v1', { provider: 'anthropic-compatible', apiKey: 'key-nov1', baseUrl: S.fake, prefix: 'nov1', models: ['claude-sonnet-4-5'] });
  await add('Closed port', { provider: 'openai-compatible', apiKey: 'key-closed', baseUrl: closed, prefix: 'closed', models: ['gpt-4o-mini'] });
  await add('Busy', { provider: 'openai-compatible', apiKey: 'key-busy', baseUrl: `${S.fake}/v1`, prefix: 'busy', models: ['gpt-4o-mini'], verify: false });
  await add('Fine', { provider: 'openai-compatible', apiKey: 'key-fine', baseUrl: `${S.fake}/v1`, prefix: 'fine', models: ['gpt-4o-mini'], priority: 5, verify: false });
  await fault('key-busy', { mode: 'status', status: 429, headers: { 'Retry-After': '840', 'X-RateLimit-Scope': 'account' }, times: 1 });
  await chat('busy/gpt-4o-mini');
  for (const [name, targets] of [
    ['forever', [{ model: 'work/gpt-4o-mini' }, { model: 'closed/gpt-4o-mini' }, { model: 'nov1/claude-sonnet-4-5' }]],
    ['later', [{ model: 'busy/gpt-4o-mini' }]],
  ]) {
    const r = await mgmt('POST', '/api/combos', { name, targets });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  // A request refused because its only connection's key is rejected (Logs, item 5).
  assert.notEqual((await chat('work/gpt-4o-mini')).status, 200);
  // A change for the Audit Log (item 8): Fine's priority from 5 to 1.
  assert.equal((await mgmt('PATCH', `/api/providers/${S.ids['Fine']}`, { priority: 1 })).status, 200);
  const h = await mgmt('GET', '/api/monitoring/health');
  const state = Object.fromEntries(h.body.connections.map((c) => [c.name, c.state]));
  assert.deepEqual(state, { 'Work OpenAI': 'key_rejected', 'No v1': 'endpoint_not_found', 'Closed port': 'unreachable', Busy: 'cooling', Fine: 'serving' });
  const s = h.body.summary;
  assert.deepEqual([s.serving, s.cooling, s.breakerOpen, s.outOfService, s.total], [1, 1, 0, 3, 5]);
});

step('item 6: the status line, the tiles, the live feed and the provider rows agree', async () => {
  const page = S.page;
  await open(page, '/overview', 'Overview');
  const s = await summary();
  await page.getByTestId('status-line').filter({ hasText: `${s.serving} of ${s.total} connections serving` }).waitFor();
  const tile = (label) => page.locator('.stat', { has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) }).locator('dd');
  assert.equal(await page.getByTestId('serving-count').innerText(), `${s.serving} of ${s.total}`);
  assert.equal(await tile('Cooling down').innerText(), String(s.cooling));
  assert.equal(await tile('Breaker open').innerText(), String(s.breakerOpen));
  assert.equal(await page.getByTestId('out-of-service-count').innerText(), String(s.outOfService));
  // Every connection not serving is listed once on the Overview.
  assert.equal(await page.locator('[data-testid="problem"][data-kind="connection"]').count(), s.total - s.serving);
  // The newest health line of the live feed says the same split.
  const want = `${s.serving} of ${s.total} serving · ${s.cooling} cooling down · ${s.outOfService} out of service`;
  await page.locator('.feed-item[data-type="health"]').first().locator('.feed-detail', { hasText: want }).waitFor();
  // Providers: their serving counts add up; none reads Degraded beside "n of n".
  let serving = 0;
  let total = 0;
  for (const row of await page.locator('tr[data-provider]').all()) {
    const [a, b] = (await row.getByTestId('provider-serving').innerText()).split(' of ').map(Number);
    serving += a;
    total += b;
    const st = await row.getByTestId('provider-state').innerText();
    if (a === b) assert.doesNotMatch(st, /Degraded/, `provider row ${await row.innerText()}`);
  }
  assert.deepEqual([serving, total], [s.serving, s.total]);
  // A dead combo whose targets never come back by themselves never says "back in".
  const forever = page.locator('[data-testid="problem"][data-kind="combo"]', { hasText: 'forever' });
  assert.equal(await forever.getByTestId('back-at').count(), 0);
  await forever.getByTestId('no-back').waitFor();
  for (const t of await forever.getByTestId('target-back').all()) assert.match(await t.innerText(), /does not come back by itself/);
  const later = page.locator('[data-testid="problem"][data-kind="combo"]', { hasText: 'later' });
  assert.match(await later.getByTestId('back-at').innerText(), /back in 1[34] min/);
  assert.deepEqual(await overflowing(page), [], 'the Overview fits 1280 px');
  await snap('truth-overview-admin');
});

step('item 5: fixes fit the state and name their connection', async () => {
  const page = S.page;
  const problem = (name) => page.locator('[data-testid="problem"][data-kind="connection"]', { hasText: name });
  // Never Unlock models (or Clear cooldown) for a state only a person ends.
  for (const [name, fix, label] of [
    ['Closed port', 'edit_connection', 'Check address'],
    ['No v1', 'edit_connection', 'Fix base URL'],
    ['Work OpenAI', 'replace_key', 'Replace key'],
  ]) {
    const fixes = problem(name).locator('.problem-foot [data-fix]');
    assert.deepEqual(await fixes.evaluateAll((els) => els.map((e) => e.dataset.fix)), [fix], name);
    assert.equal((await fixes.first().innerText()).trim(), label);
  }
  assert.equal(await page.locator('[data-testid="problem"][data-state="unreachable"] [data-fix="unlock_models"], [data-testid="problem"][data-state="endpoint_not_found"] [data-fix="unlock_models"]').count(), 0);
  assert.match(await problem('No v1').locator('[data-fix]').getAttribute('href'), /field=baseUrl/);
  // In the dead combo's card each fix names the connection it acts on.
  const combo = page.locator('[data-testid="problem"][data-kind="combo"]', { hasText: 'forever' });
  for (const name of ['Work OpenAI', 'Closed port', 'No v1']) {
    const row = combo.locator(`[data-connection="${S.ids[name]}"]`);
    assert.match(await row.locator('[data-fix]').first().innerText(), new RegExp(`· ${name}$`));
  }
  // Check address opens the editor on the base URL field.
  await problem('Closed port').locator('[data-fix="edit_connection"]').click();
  await page.waitForFunction(() => document.activeElement?.id === 'edit-baseurl');
  await page.keyboard.press('Escape');
});

step('item 5: a failed Logs row and a failed Playground answer offer the fix and a link to the connection', async () => {
  const page = S.page;
  await open(page, '/logs', 'Logs');
  const row = page.locator('tbody[data-request-id]', { has: page.locator('code.model-name', { hasText: 'work/gpt-4o-mini' }) }).first();
  await row.locator('button.expander').click();
  const fixes = row.getByTestId('failure-fixes');
  await fixes.waitFor();
  const item = fixes.locator(`li[data-connection="${S.ids['Work OpenAI']}"]`);
  assert.equal(await item.getByTestId('connection-link').innerText(), 'Work OpenAI');
  assert.match(await item.getByTestId('connection-link').getAttribute('href'), new RegExp(`edit=${S.ids['Work OpenAI']}`));
  assert.equal((await item.locator('[data-fix]').innerText()).trim(), 'Replace key');
  assert.doesNotMatch(await page.locator('main').innerText(), HEX_ID, 'no connection id on Logs');

  await open(page, '/playground', 'Playground');
  await page.getByLabel('Model or combo').fill('fine/gpt-4o-mini');
  await page.getByTestId('pg-send').click();
  await page.getByTestId('pg-status').filter({ hasText: /served by Fine$/ }).waitFor();
  await page.getByLabel('Model or combo').fill('work/gpt-4o-mini');
  await page.getByTestId('pg-send').click();
  const pgFix = page.getByTestId('pg-timeline').getByTestId('failure-fixes');
  await pgFix.waitFor();
  assert.equal(await pgFix.getByTestId('connection-link').first().innerText(), 'Work OpenAI');
  assert.equal(await pgFix.locator('[data-fix="replace_key"]').count(), 1);
});

step('item 8: no 32-hex id or raw body on the pages; the Audit Log reads as sentences', async () => {
  const page = S.page;
  for (const [route, title] of [
    ['/overview', 'Overview'],
    ['/connections', 'Connections'],
    ['/cooldowns', 'Cooldown Manager'],
    ['/model-cooldowns', 'Model Cooldowns'],
    ['/combos', 'Combos'],
  ]) {
    await open(page, route, title);
    await page.waitForTimeout(300); // the health model's badges
    const text = await page.locator('main').innerText();
    assert.doesNotMatch(text, HEX_ID, `a connection id on ${title}`);
    assert.doesNotMatch(text, /\{"|"error":/, `a raw JSON body on ${title}`);
  }
  await open(page, '/audit', 'Audit log');
  await page.getByTestId('audit-sentence').filter({ hasText: 'changed the priority of Fine from 5 to 1.' }).waitFor();
  await page.getByTestId('audit-sentence').filter({ hasText: 'added the connection Work OpenAI.' }).waitFor();
  const text = await page.locator('table.audit-table').innerText();
  assert.doesNotMatch(text, /\/api\/|\{"|\[redacted\]/);
  assert.doesNotMatch(text, HEX_ID);
  await snap('truth-audit');
});

step("item 5: a viewer's session sees every fix disabled with the reason, and never gets a 403", async () => {
  assert.equal((await mgmt('POST', '/api/users', { email: 'vic@example.com', name: 'Vic', role: 'viewer', password: 'vic-password-1' })).status, 201);
  const context = await S.browser.newContext({ viewport: { width: 1280, height: 860 } });
  context.setDefaultTimeout(STEP_TIMEOUT);
  const page = await context.newPage();
  const forbidden = [];
  page.on('response', (r) => r.status() === 403 && forbidden.push(`${r.request().method()} ${r.url()}`));
  page.on('pageerror', (err) => S.errors.push(err.message));
  await page.goto(`${S.base}/dashboard/`);
  await page.getByLabel('Email', { exact: true }).fill('vic@example.com');
  await page.getByLabel('Password', { exact: true }).fill('vic-password-1');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  await page.locator('[data-testid="problem"]').first().waitFor();
  const fixes = page.locator('[data-testid="not-serving"] [data-fix]');
  assert.ok((await fixes.count()) >= 5, 'the viewer sees the fixes');
  for (const f of await fixes.all()) {
    assert.equal(await f.evaluate((e) => e.tagName), 'BUTTON', 'no link to an editor the viewer cannot save');
    assert.equal(await f.isDisabled(), true, await f.innerText());
    assert.match(await f.getAttribute('data-denied'), /you are a viewer/);
  }
  await page.getByTestId('fix-denied').first().filter({ hasText: /you are a viewer/ }).waitFor();
  await page.locator('[data-testid="not-serving"] [data-fix]').first().click({ force: true }).catch(() => {});
  // Pause needs an operator; the default key is for admins (said, never a 403).
  assert.equal(await page.getByRole('button', { name: /Pause gateway/ }).isDisabled(), true);
  await page.getByTestId('default-key-denied').waitFor();
  // Cooldown Manager: clearing needs an operator.
  await open(page, '/cooldowns', 'Cooldown Manager');
  const clearAll = page.getByRole('button', { name: /^Clear all/ });
  await clearAll.waitFor();
  assert.equal(await clearAll.isDisabled(), true);
  assert.match(await clearAll.getAttribute('data-denied'), /you are a viewer/);
  // Connections: the admin buttons are there but disabled, with why.
  await open(page, '/connections', 'Connections');
  const edit = page.getByRole('button', { name: /^Edit Fine/ });
  await edit.waitFor();
  assert.equal(await edit.isDisabled(), true);
  assert.match(await edit.getAttribute('title'), /Only an admin/);
  assert.equal(await page.getByRole('button', { name: /^Delete Fine/ }).isDisabled(), true);
  // Logs: the failed row's fix is disabled too; the link to the connection stays.
  await open(page, '/logs', 'Logs');
  const row = page.locator('tbody[data-request-id]', { has: page.locator('code.model-name', { hasText: 'work/gpt-4o-mini' }) }).first();
  await row.locator('button.expander').click();
  const item = row.getByTestId('failure-fixes').locator(`li[data-connection="${S.ids['Work OpenAI']}"]`);
  await item.waitFor();
  assert.equal(await item.locator('[data-fix="replace_key"]').isDisabled(), true);
  assert.equal(await item.getByTestId('connection-link').innerText(), 'Work OpenAI');
  assert.deepEqual(forbidden, [], 'no click of a viewer reached a 403');
  await snapPage(page, 'truth-viewer-logs');
  await context.close();
});

step('no console errors', async () => {
  assert.deepEqual(S.errors, []);
});
