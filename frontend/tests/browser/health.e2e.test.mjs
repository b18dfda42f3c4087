// Browser test of issue 17: one truth about health on every page, and every
// page fits the window. Builds the state through the API against the
// real gateway binary and the fake upstream — five connections, a cooldown,
// one provider breaker OPEN, three model locks, a lease — and looks at every
// page at 1280×800, 1024×768 and 800×600 in Debian's Chromium.
//
//   cd frontend && npm run test:browser
//
// Env as in dashboard.e2e.test.mjs (OMNIROUTE_BIN, FAKEUPSTREAM_BIN,
// CHROMIUM_BIN, E2E_ARTIFACTS). Every process it starts is killed at the end.

import assert from 'node:assert/strict';
import { launchChromium, management, overflowing, snap as snapPage, startFakeUpstream, startGateway, stepper, tempDir } from './harness.mjs';

const SIZES = [
  [1280, 800],
  [1024, 768],
  [800, 600],
];
const STEP_TIMEOUT = 10_000;

const S = { base: '', token: '', fake: '', browser: null, page: null, ids: {}, consoleErrors: [] };
const step = stepper('health', () => S.page);
const snap = (name) => snapPage(S.page, name);

const mgmt = (method, p, body) => management(S.base, S.token)(method, p, body);

async function chat(model, key = S.clientKey) {
  const res = await fetch(`${S.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
  });
  return { status: res.status, body: await res.text() };
}

async function fault(key, f) {
  const res = await fetch(`${S.fake}/_fake/faults`, { method: 'POST', body: JSON.stringify({ key, fault: f }) });
  assert.equal(res.status, 204, await res.text());
}

const PAGES = [
  ['/overview', 'Overview'],
  ['/connections', 'Connections'],
  ['/combos', 'Combos'],
  ['/keys', 'API Keys'],
  ['/agents', 'Agents'],
  ['/usage', 'Usage'],
  ['/logs', 'Logs'],
  ['/cooldowns', 'Cooldown Manager'],
  ['/model-cooldowns', 'Model Cooldowns'],
  ['/leases', 'Leases'],
  ['/lockout-settings', 'Lockout Settings'],
  ['/resilience', 'Resilience Settings'],
  ['/settings', 'Settings'],
  ['/backup', 'Backup & Restore'],
];

async function open(route, title) {
  await S.page.goto(`${S.base}/dashboard/#${route}`);
  await S.page.getByRole('heading', { level: 1, name: title }).waitFor();
}

// ---------------------------------------------------------------- steps

step('start the fake upstream, the gateway and Chromium', async () => {
  const tmp = tempDir('health');
  S.fake = (await startFakeUpstream(tmp)).base;
  const gw = await startGateway(tmp);
  S.clientKey = gw.key;
  S.token = gw.token;
  S.base = gw.base;
  S.browser = await launchChromium();
  const context = await S.browser.newContext({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' });
  context.setDefaultTimeout(STEP_TIMEOUT);
  S.page = await context.newPage();
  S.page.on('pageerror', (err) => S.consoleErrors.push(err.message));
  await S.page.goto(gw.link);
  await S.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
});

step('zero connections: Set up (grey) on the Overview and in the header, never Healthy', async () => {
  const page = S.page;
  await open('/overview', 'Overview');
  await page.getByTestId('setup-state').waitFor();
  await page.locator('[data-testid="overview-health"]', { hasText: 'Set up' }).waitFor();
  assert.match(await page.locator('[data-testid="overview-health"]').getAttribute('class'), /health-muted/);
  await page.locator('.topbar .health', { hasText: 'Set up' }).waitFor();
  assert.equal(await page.locator('.topbar .health', { hasText: 'Healthy' }).count(), 0);
  const h = await mgmt('GET', '/api/monitoring/health');
  assert.equal(h.body.status, 'setup');
  await snap('health-setup-1280');
});

step('Overview: the release check is opt-in; a newer release reads "Version X is available" with its page', async () => {
  const page = S.page;
  await open('/overview', 'Overview');
  await page.getByTestId('update-line').filter({ hasText: 'The update check is off.' }).waitFor();
  // "Check for updates" is the opt-in: it turns the check on and checks a
  // mirror that has no manifest (the fake upstream answers 404): said, never a crash.
  const set = await mgmt('PATCH', '/api/settings', { updateUrl: `${S.fake}/no-manifest.json` });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  await page.getByTestId('update-check').click();
  await page.getByTestId('update-line').filter({ hasText: /Update check/ }).waitFor();
  assert.equal((await mgmt('GET', '/api/settings')).body.updateCheck, true);
  // A verified newer release (the signature check itself is tested in Go): the notice links its page.
  await page.route('**/api/update', (route) =>
    route.fulfill({ json: { enabled: true, current: '0.2.0', latest: '9.9.9', available: true, url: 'https://example.invalid/release/9.9.9', checkedAt: new Date().toISOString() } }),
  );
  await page.reload();
  const notice = page.getByTestId('update-available');
  await notice.filter({ hasText: 'Version 9.9.9 is available (this is 0.2.0).' }).waitFor();
  assert.equal(await notice.getByRole('link').getAttribute('href'), 'https://example.invalid/release/9.9.9');
  await page.unroute('**/api/update');
  assert.equal((await mgmt('PATCH', '/api/settings', { updateCheck: false })).status, 200);
});

step('build the issue state: five connections, a cooldown, an OPEN breaker, three model locks, a lease', async () => {
  const add = async (name, prefix, key, models) => {
    const r = await mgmt('POST', '/api/providers', { provider: 'openai-compatible', name, apiKey: key, baseUrl: `${S.fake}/v1`, prefix, models });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    S.ids[name] = r.body.connection.id;
  };
  await add('Work', 'work', 'key-work', ['gpt-4o-mini']);
  await add('Lab', 'lab', 'key-lab', ['gpt-4o-mini']);
  await add('Personal', 'personal', 'key-personal', ['m1', 'm2', 'm3', 'm4']);
  await add('Leased', 'leased', 'key-leased', ['gpt-4o-mini']);
  await add('Spare', 'spare', 'key-spare', ['gpt-4o-mini']);

  // A cooldown: Work answers 429 with Retry-After 14 minutes, for the whole account.
  await fault('key-work', { mode: 'status', status: 429, headers: { 'Retry-After': '840', 'X-RateLimit-Scope': 'account' }, times: 1 });
  await chat('work/gpt-4o-mini');
  // The Lab endpoint's breaker opens after repeated 503s (one attempt each and
  // no streak cooldown, so every 503 reaches the breaker).
  // The breaker stays OPEN for 55 s (countdowns still read in seconds): on a
  // loaded machine the steps up to the Logs refusal outlast the default 30 s,
  // and a HALF_OPEN probe there would lock Lab's model instead.
  const streak = await mgmt('PATCH', '/api/resilience', {
    failover: { failureStreak: 100, retriesPerTarget: 0 },
    providerBreaker: { apikey: { resetTimeoutMs: 55_000 } },
  });
  assert.equal(streak.status, 200, JSON.stringify(streak.body));
  await fault('key-lab', { mode: 'status', status: 503 });
  for (let i = 0; i < 15; i++) await chat('lab/gpt-4o-mini');
  // Three model locks on Personal (404 on m1..m3), m4 still serves.
  const on = await mgmt('PATCH', '/api/resilience', { modelLockout: { enabled: true } });
  assert.equal(on.status, 200, JSON.stringify(on.body));
  await fault('key-personal', { mode: 'status', status: 404, models: ['m1', 'm2', 'm3'] });
  for (const m of ['m1', 'm2', 'm3']) await chat(`personal/${m}`);
  // A lease on "Leased" by a key allowed only that connection.
  const key = await mgmt('POST', '/api/keys', { name: 'lease agent', scopes: ['inference', 'lease:exclusive'], allowedConnections: [S.ids.Leased] });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const acquired = await fetch(`${S.base}/api/v1/session-leases`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key.body.key}`, 'X-OmniRoute-Lease-Owner': `vlo_${'h'.repeat(43)}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ action: 'acquire', model: 'leased/gpt-4o-mini' }),
  });
  assert.equal(acquired.status, 200, await acquired.text());
  await chat('spare/gpt-4o-mini');
  // A combo whose only target is behind the OPEN breaker is dead.
  const strategies = (await mgmt('GET', '/api/combos/strategies')).body.strategies;
  const combo = await mgmt('POST', '/api/combos', { name: 'labonly', strategy: strategies[0], targets: [{ model: 'lab/gpt-4o-mini' }] });
  assert.equal(combo.status, 201, JSON.stringify(combo.body));

  const h = await mgmt('GET', '/api/monitoring/health');
  assert.equal(h.body.combos.find((c) => c.name === 'labonly')?.state, 'dead', JSON.stringify(h.body.combos));
  const st = Object.fromEntries(h.body.connections.map((c) => [c.name, c.state]));
  assert.deepEqual(st, { Work: 'cooling', Lab: 'breaker_open', Personal: 'models_locked', Leased: 'leased', Spare: 'serving' }, JSON.stringify(h.body.connections));
  // Leased serves only its holder: for the dashboard (nobody's key) it is not serving.
  assert.equal(h.body.connections.find((c) => c.name === 'Leased')?.serving, false);
  assert.equal(h.body.summary.serving, 2);
  assert.equal(h.body.summary.locks, 3);
  assert.equal(h.body.status, 'degraded');
});

step('the OPEN-breaker connection is not shown healthy on any page; Overview names it with a live countdown', async () => {
  const page = S.page;
  await open('/overview', 'Overview');
  const lab = page.locator('[data-testid="problem"][data-kind="connection"]', { hasText: 'Lab' }).first();
  await lab.waitFor();
  assert.equal(await lab.getAttribute('data-state'), 'breaker_open');
  await lab.getByText('Breaker open', { exact: true }).waitFor();
  const back = lab.getByTestId('back-at');
  assert.match(await back.textContent(), /^back in \d+ s$/);
  const first = await back.textContent();
  await page.waitForTimeout(2100);
  assert.notEqual(await back.textContent(), first, 'the countdown ticks');
  await lab.getByRole('button', { name: /Reset breaker/ }).waitFor();
  const work = page.locator('[data-testid="problem"][data-kind="connection"]', { hasText: 'Work' }).first();
  assert.match(await work.getByTestId('back-at').textContent(), /^back in 1[34] min/);
  await work.getByRole('button', { name: /Clear cooldown/ }).waitFor();
  const personal = page.locator('[data-testid="problem"]', { hasText: 'Personal' }).first();
  await personal.getByText('m1', { exact: true }).waitFor();
  await personal.getByRole('button', { name: /Unlock models/ }).waitFor();
  await page.getByTestId('status-line').filter({ hasText: /^2 of 5 connections serving · Lab back in \d+ s$/ }).waitFor();
  // The Connections tiles agree with it and add up (issue 42): the leased one is out of service, not forgotten.
  const tiles = () =>
    page.locator('section[aria-labelledby="ov-conn-title"] .stat').evaluateAll((els) => Object.fromEntries(els.map((e) => [e.querySelector('dt')?.textContent, e.querySelector('dd')?.textContent])));
  const want = { Serving: '2 of 5', 'Cooling down': '1', 'Breaker open': '1', 'Out of service': '1' };
  let got = {};
  for (let i = 0; i < 50; i++) {
    const t = await tiles();
    got = Object.fromEntries(Object.keys(want).map((k) => [k, t[k]]));
    if (JSON.stringify(got) === JSON.stringify(want)) break;
    await page.waitForTimeout(100);
  }
  assert.deepEqual(got, want, 'the Overview connection tiles');
  // Held by another key's lease: named with its holder, until when, and Release.
  const leased = page.locator('[data-testid="problem"][data-kind="connection"]', { hasText: 'Leased' }).first();
  await leased.getByTestId('leased-by').filter({ hasText: /Held exclusively by lease agent for leased\/gpt-4o-mini until/ }).waitFor();
  await leased.getByRole('button', { name: /Release lease/ }).waitFor();
  const dead = page.locator('[data-testid="problem"][data-kind="combo"]', { hasText: 'labonly' });
  await dead.getByText('Dead', { exact: true }).waitFor();
  // A dead combo says why for each target and offers its connections' fixes.
  await dead.getByTestId('combo-targets').filter({ hasText: /lab\/gpt-4o-mini.*circuit breaker open/ }).waitFor();
  await dead.getByRole('button', { name: /Reset breaker: Lab/ }).waitFor();
  assert.match(await dead.getByTestId('back-at').textContent(), /^back in \d+ s$/);

  await open('/combos', 'Combos');
  await page.locator('[data-combo="labonly"]').getByTestId('combo-health').getByText('Dead').waitFor();

  await open('/connections', 'Connections');
  const row = page.locator(`tr[data-id="${S.ids.Lab}"]`);
  await row.getByTestId('status-badge').filter({ hasText: 'Breaker open' }).waitFor();
  assert.equal(await row.getByTestId('status-badge').filter({ hasText: 'Healthy' }).count(), 0);
  await page.locator(`tr[data-id="${S.ids.Leased}"]`).getByTestId('status-badge').filter({ hasText: 'Leased' }).waitFor();
  await page.locator(`tr[data-id="${S.ids.Personal}"]`).getByTestId('status-badge').filter({ hasText: 'Models locked' }).waitFor();

  await open('/cooldowns', 'Cooldown Manager');
  await page.getByText('Breaker open').first().waitFor();
  const labCard = page.locator(`[data-id="${S.ids.Lab}"]`).first();
  assert.equal(await labCard.getByText('Healthy', { exact: true }).count(), 0, 'the Cooldown Manager does not count it as healthy');

  // No page says the Lab connection is healthy anywhere near its name.
  for (const [route, title] of PAGES) {
    await open(route, title);
    await page.waitForTimeout(150);
    const bad = await page.evaluate((id) => {
      const hits = [];
      for (const el of document.querySelectorAll(`[data-id="${id}"], [data-connection-id="${id}"]`)) {
        if (/\bHealthy\b/.test(el.textContent ?? '')) hits.push(el.outerHTML.slice(0, 200));
      }
      return hits;
    }, S.ids.Lab);
    assert.deepEqual(bad, [], `${title} shows the OPEN-breaker connection as healthy`);
  }
});

step('no element overflows sideways on any page at 1280×800, 1024×768 and 800×600', async () => {
  const page = S.page;
  const problems = [];
  for (const [w, hgt] of SIZES) {
    await page.setViewportSize({ width: w, height: hgt });
    for (const [route, title] of PAGES) {
      await open(route, title);
      await page.waitForTimeout(250);
      const over = await overflowing(page);
      if (over.length) problems.push(`${title} at ${w}×${hgt}:\n  ${over.slice(0, 6).join('\n  ')}`);
      await snap(`health-${route.slice(1)}-${w}x${hgt}`);
    }
  }
  assert.deepEqual(problems, []);
});

step('at 800×600 the sidebar folds behind Menu; a dialog closes on navigation', async () => {
  const page = S.page;
  await page.setViewportSize({ width: 800, height: 600 });
  await open('/connections', 'Connections');
  const nav = page.getByRole('navigation', { name: 'Dashboard pages' });
  assert.equal(await nav.isVisible(), false);
  const menu = page.getByRole('button', { name: /Menu/ });
  await menu.click();
  assert.equal(await menu.getAttribute('aria-expanded'), 'true');
  await nav.getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
  assert.equal(await nav.isVisible(), false, 'navigating folds the menu again');

  await page.setViewportSize({ width: 1280, height: 800 });
  await open('/connections', 'Connections');
  await page.locator(`tr[data-id="${S.ids.Spare}"]`).getByRole('button', { name: /Edit/ }).click();
  await page.locator('dialog[open]').waitFor();
  await page.goto(`${S.base}/dashboard/#/overview`);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  assert.equal(await page.locator('dialog[open]').count(), 0, 'the edit dialog closed with the page');
});

step('Keys: scopes, allowed connections and models are edited in the page; Agents never print the key in clear', async () => {
  const page = S.page;
  await page.setViewportSize({ width: 1280, height: 800 });
  const created = await mgmt('POST', '/api/keys', { name: 'ci runner' });
  assert.equal(created.status, 201);
  await open('/keys', 'API Keys');
  const row = page.locator(`tr[data-key-id="${created.body.id}"]`);
  await row.getByRole('button', { name: 'Edit access of key ci runner' }).click();
  const dlg = page.locator('dialog[open]');
  await dlg.getByLabel('lease:exclusive', { exact: false }).check();
  await dlg.locator(`[id="allow-${S.ids.Spare}"]`).check();
  await dlg.getByLabel('Allowed models').fill('spare/gpt-4o-mini, m4');
  await dlg.getByRole('button', { name: 'Save access' }).click();
  await page.getByText('Saved the access of “ci runner”.').waitFor();
  const keys = await mgmt('GET', '/api/keys');
  const k = keys.body.keys.find((x) => x.id === created.body.id);
  assert.deepEqual([k.scopes, k.allowedConnections, k.allowedModels], [['inference', 'lease:exclusive'], [S.ids.Spare], ['spare/gpt-4o-mini', 'm4']]);
  await row.getByTestId('key-access').getByText('Spare', { exact: true }).waitFor();
  assert.equal((await page.content()).includes(created.body.key), false, 'the key value is not on the page after the show-once moment');

  await open('/agents', 'Agents');
  // Open every agent's instructions (the list re-renders after each).
  await page.getByRole('button', { name: 'Show instructions' }).first().waitFor();
  for (let i = 0; i < 12 && (await page.getByRole('button', { name: 'Show instructions' }).count()) > 0; i++) {
    await page.getByRole('button', { name: 'Show instructions' }).first().click();
    await page.waitForTimeout(150);
  }
  await page.locator('[data-testid="env-line"]').first().waitFor();
  await snap('health-agents-instructions');
  assert.equal((await page.locator('main').innerText()).includes(S.clientKey), false, 'the Agents page prints the client key in clear');
});

step('Logs: a refusal lists every excluded target with its reason; attempts show a timeline; filters by connection', async () => {
  const page = S.page;
  // The build step's requests after the Lab breaker opened were refused
  // (503, no attempt): no new request here, since a breaker probes again
  // within 15 s (docs/FAILOVER.md) and a failed probe would lock Lab's model
  // (lockout is on) instead of showing the breaker.
  await page.waitForTimeout(1300); // the request log is written in batches about once a second
  await open('/logs', 'Logs');
  const refused = page.locator('[data-testid="logs-table"] tbody', { hasText: 'lab/gpt-4o-mini' }).filter({ hasText: '503' }).first();
  await refused.getByRole('button', { name: /Show attempts/ }).click();
  await refused.getByTestId('exclusion-reason').filter({ hasText: 'provider circuit breaker open' }).waitFor();
  const failed = page.locator('[data-testid="logs-table"] tbody', { hasText: 'lab/gpt-4o-mini' }).filter({ hasText: '502' }).first();
  await failed.getByRole('button', { name: /Show attempts/ }).click();
  await failed.getByTestId('attempt-timeline').waitFor();
  await snap('health-logs-expanded');
  await page.getByLabel('Connection').selectOption({ label: 'Spare' });
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="logs-table"] tbody')].every((b) => b.textContent.includes('spare/')));
  assert.match(new URL(page.url()).hash, /connectionId=/);
});

step('Usage shows charts and the breaker timeline; one-click fixes bring connections back', async () => {
  const page = S.page;
  await open('/usage', 'Usage');
  await page.getByTestId('chart-requests').locator('svg rect').first().waitFor();
  await page.getByTestId('timeline').locator('[data-provider="openai-compatible:lab"]').waitFor();
  await snap('health-usage-charts');

  await open('/overview', 'Overview');
  const lab = page.locator('[data-testid="problem"][data-kind="connection"]', { hasText: 'Lab' }).first();
  await lab.getByRole('button', { name: /Reset breaker/ }).click();
  await page.locator('[data-testid="problem"][data-kind="connection"]', { hasText: 'Lab' }).waitFor({ state: 'detached' });
  const work = page.locator('[data-testid="problem"][data-kind="connection"]', { hasText: 'Work' }).first();
  await work.getByRole('button', { name: /Clear cooldown/ }).click();
  await page.locator('[data-testid="problem"][data-kind="connection"]', { hasText: 'Work' }).waitFor({ state: 'detached' });
  assert.deepEqual(S.consoleErrors, []);
});
