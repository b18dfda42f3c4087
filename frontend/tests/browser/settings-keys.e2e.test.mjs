// Browser test of issue 42 items 9, 10 and item 3's pricing editor against
// the real headless gateway and the fake upstream, on a mixed state (a priced
// and an unpriced connection, a key with a dollar budget, an expiring key, a
// viewer's session):
//  - Settings: every key GET /api/settings returns has its place with a
//    default; a value the page refuses, one the gateway refuses (its message
//    under the field), a save; the Overview's daily update check is turned
//    off from the link it offers; a viewer sees the page read-only.
//  - API Keys: a key created with an expiry shows it; the Expiry dialog
//    refuses a past time; an expired key says so (and the API answers 401
//    KEY_EXPIRED); Rotate with a grace period shows the new secret once,
//    both secrets work during the grace; a viewer sees Rotate disabled with the reason.
//  - Pricing: a request refused MODEL_PRICE_UNKNOWN shows "Set its price" on
//    its Logs row, which opens the Connections page's pricing editor on that
//    model; the price saved there lets the next request through.
//  - Custom From / To ranges on Usage and Logs.
// No sideways overflow at 800×600, no page errors.
//
//   cd frontend && OMNIROUTE_BIN=../bin/omniroute node --test tests/browser/settings-keys.e2e.test.mjs

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChromium, management, overflowing as overflowingNow, snap, startFakeUpstream, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('settings-keys');

/** Elements sticking out sideways at 800×600 (then back to the test's size). */
async function overflowing(page) {
  await page.setViewportSize({ width: 800, height: 600 });
  await page.waitForTimeout(150);
  const out = await overflowingNow(page);
  await page.setViewportSize({ width: 1280, height: 860 });
  return out;
}

/** settingKeys of src/lib/settings.ts: objects by their fields, anything else a leaf. */
function settingKeys(doc, prefix = '') {
  const out = [];
  for (const [k, v] of Object.entries(doc)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...settingKeys(v, key));
    else out.push(key);
  }
  return out;
}

/** A datetime-local value of t in the browser's (and this process's) time zone. */
function local(t) {
  const d = new Date(t);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

test('settings, key expiry and rotation, the pricing editor and custom ranges', async () => {
  const fake = (await startFakeUpstream(tmp)).base;
  const g = await startGateway(tmp, { TZ: 'UTC' });
  const mgmt = management(g.base, g.token);
  const chat = async (key, model) => {
    const res = await fetch(`${g.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: res.status, body: await res.json() };
  };

  // The mixed state: a priced connection, an unpriced one, a viewer token.
  const priced = await mgmt('POST', '/api/providers', { provider: 'openai-compatible', name: 'Metered', apiKey: 'key-a', baseUrl: `${fake}/v1`, priority: 1, models: ['gpt-4o-mini'], verify: false });
  assert.equal(priced.status, 201, JSON.stringify(priced.body));
  assert.equal((await mgmt('PATCH', `/api/providers/${priced.body.connection.id}`, { pricing: { 'gpt-4o-mini': { inputPerMTok: 1, outputPerMTok: 1 } } })).status, 200);
  const lab = await mgmt('POST', '/api/providers', { provider: 'openai-compatible', name: 'Lab box', apiKey: 'key-lab', baseUrl: `${fake}/v1`, priority: 2, models: ['local-llama'], verify: false });
  assert.equal(lab.status, 201, JSON.stringify(lab.body));
  const labId = lab.body.connection.id;
  const viewer = await mgmt('POST', '/api/tokens', { name: 'viewer-screen', role: 'viewer' });
  assert.equal(viewer.status, 201, JSON.stringify(viewer.body));
  const viewerToken = viewer.body.token ?? viewer.body.value;
  assert.ok(viewerToken, JSON.stringify(viewer.body));

  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const nav = (label) => page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: label, exact: true }).click();
  try {
    await page.goto(g.link);

    // ---------------------------------------------------------------- Settings
    await nav('Settings');
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByTestId('settings-form').waitFor({ timeout: 10_000 });
    const { body: settings } = await mgmt('GET', '/api/settings');
    const keys = settingKeys(settings);
    assert.ok(keys.length >= 25, `only ${keys.length} settings`);
    const placed = await page.locator('[data-setting]').evaluateAll((els) => els.map((e) => e.getAttribute('data-setting')));
    for (const k of keys) {
      const home = k.split('.').map((_, i, a) => a.slice(0, a.length - i).join('.')).find((x) => placed.includes(x));
      assert.ok(home, `GET /api/settings returns ${k}, which has no place on the Settings page`);
      const text = await page.locator(`[data-setting="${home}"]`).innerText();
      assert.match(text, /Default: /, `${home} does not show its default`);
    }
    assert.equal(await page.getByTestId('settings-unplaced').count(), 0, 'every setting is described');
    // The page refuses an out-of-range value itself, naming the range.
    await page.locator('#set-requestLogRetention').fill('50');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#set-requestLogRetention-error').getByText('Must be 100 to 10,000,000.').waitFor();
    await page.locator('#set-requestLogRetention').fill('20000');
    // The gateway refuses a plain-http manifest URL: its message under the field, nothing saved.
    await page.locator('#set-updateUrl').fill('http://example.com/latest.json');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#set-updateUrl-error').getByText(/https/).waitFor({ timeout: 10_000 });
    assert.match(await page.locator('#set-updateUrl-error').innerText(), /INVALID_SETTING/);
    assert.equal((await mgmt('GET', '/api/settings')).body.requestLogRetention, 10000, 'a refused PATCH saves nothing');
    await page.locator('#set-updateUrl').fill(settings.updateUrl);
    await page.locator('#set-team-limits').selectOption('instance');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('saved').getByText('Saved 2 changes.').waitFor({ timeout: 10_000 });
    const saved = (await mgmt('GET', '/api/settings')).body;
    assert.deepEqual([saved.requestLogRetention, saved.team.limits, saved.updateUrl], [20000, 'instance', settings.updateUrl]);
    assert.deepEqual(await overflowing(page), [], 'Settings fits 800×600');

    // The daily update check ("Check for updates" turned it on) is turned off from the Overview's link.
    assert.equal((await mgmt('PATCH', '/api/settings', { updateCheck: true, updateUrl: 'http://127.0.0.1:9/latest.json' })).status, 200);
    await nav('Overview');
    await page.getByTestId('update-off').click({ timeout: 10_000 });
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const box = page.locator('#set-updateCheck');
    await page.waitForFunction(() => document.activeElement?.id === 'set-updateCheck', null, { timeout: 10_000 });
    assert.equal(await box.isChecked(), true);
    await box.uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('saved').waitFor({ timeout: 10_000 });
    assert.equal((await mgmt('GET', '/api/settings')).body.updateCheck, false, 'the daily check is off');

    // ---------------------------------------------------------------- API Keys
    await nav('API Keys');
    await page.locator('#key-name').fill('ci bot');
    await page.locator('#new-key-expires').fill(local(Date.now() - 3_600_000));
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Choose a time in the future').waitFor();
    const inAMonth = Date.now() + 30 * 86_400_000;
    await page.locator('#new-key-expires').fill(local(inAMonth));
    await page.getByRole('button', { name: 'Create key' }).click();
    const first = await page.locator('#new-key-value').inputValue();
    assert.match(first, /^sk-omni-/);
    await page.getByRole('button', { name: 'Done — I saved it' }).click();
    const ciKey = (await mgmt('GET', '/api/keys')).body.keys.find((k) => k.name === 'ci bot');
    assert.ok(ciKey.expiresAt && Math.abs(Date.parse(ciKey.expiresAt) - inAMonth) < 120_000, JSON.stringify(ciKey));
    const ciRow = page.locator(`tr[data-key-id="${ciKey.id}"]`);
    await ciRow.getByTestId('key-expiry').getByText(/^in (29|30) d/).waitFor({ timeout: 10_000 });

    // The Expiry dialog refuses a past time.
    await ciRow.getByRole('button', { name: 'Set the expiry of key ci bot' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.locator('#key-expiry-at').fill(local(Date.now() - 60_000));
    await dialog.getByRole('button', { name: 'Save expiry' }).click();
    await dialog.getByText('Choose a time in the future').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // Rotate with an hour of grace: the new secret once, both secrets work.
    await ciRow.getByRole('button', { name: 'Rotate key ci bot' }).click();
    await dialog.getByLabel('Keep the old secret working for 1 hour').check();
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const second = await page.locator('#rotated-key-value').inputValue();
    assert.match(second, /^sk-omni-/);
    assert.notEqual(second, first);
    assert.match(await page.locator('#rotated-key-warning').innerText(), /old secret keeps working until/);
    await ciRow.getByTestId('key-grace').waitFor({ timeout: 10_000 });
    for (const secret of [first, second]) assert.equal((await chat(secret, 'gpt-4o-mini')).status, 200, 'both secrets work during the grace');
    assert.deepEqual(await overflowing(page), [], 'API Keys with a new secret fits 800×600');
    await page.getByRole('button', { name: 'Done — I saved it' }).click();
    assert.equal((await page.content()).includes(second), false, 'the new secret left the page');
    const rotated = (await mgmt('GET', '/api/keys')).body.keys.find((k) => k.id === ciKey.id);
    assert.deepEqual([rotated.name, rotated.expiresAt], ['ci bot', ciKey.expiresAt], 'the same key: name and expiry kept');

    // An expired key: 401 KEY_EXPIRED, and the page says expired.
    const soon = await mgmt('POST', '/api/keys', { name: 'short-lived', expiresAt: new Date(Date.now() + 1500).toISOString() });
    assert.equal(soon.status, 201, JSON.stringify(soon.body));
    await page.waitForTimeout(2000);
    const refused = await chat(soon.body.key, 'gpt-4o-mini');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'KEY_EXPIRED');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator(`tr[data-key-id="${soon.body.id}"] [data-testid="key-expiry"][data-expired="true"]`).waitFor({ timeout: 10_000 });

    // ---------------------------------------------------------------- Pricing
    const capped = await mgmt('POST', '/api/keys', { name: 'capped', budget: { usd: 1, period: 'day' } });
    const unknown = await chat(capped.body.key, 'local-llama');
    assert.equal(unknown.status, 403, JSON.stringify(unknown.body));
    assert.equal(unknown.body.error.code, 'MODEL_PRICE_UNKNOWN');
    assert.match(unknown.body.error.message, /set its price/);
    await nav('Logs');
    const fix = page.locator('a[data-fix="set_price"]').first();
    // The log is written in batches: refresh until the refused row is there.
    for (let i = 0; i < 10 && !(await fix.isVisible()); i++) {
      await page.waitForTimeout(1000);
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    }
    await fix.waitFor({ timeout: 5000 });
    await fix.click();
    const editor = page.getByTestId('pricing-form');
    await editor.waitFor({ timeout: 10_000 });
    assert.match(await page.getByRole('dialog').innerText(), /Prices of “Lab box”/);
    const row = editor.locator('tr[data-model="local-llama"]');
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-field') === 'input', null, { timeout: 5000 });
    await row.locator('[data-field="input"]').fill('abc');
    await editor.getByRole('button', { name: 'Save prices' }).click();
    await editor.getByText('Input price: a number of dollars').waitFor();
    await row.locator('[data-field="input"]').fill('0.5');
    await row.locator('[data-field="output"]').fill('1.5');
    assert.deepEqual(await overflowing(page), [], 'the pricing editor fits 800×600');
    await editor.getByRole('button', { name: 'Save prices' }).click();
    await page.getByText('Saved the prices of “Lab box”: 1 model priced.').waitFor({ timeout: 10_000 });
    const labNow = (await mgmt('GET', `/api/providers/${labId}`)).body;
    const labConn = labNow.connection ?? labNow;
    assert.deepEqual(labConn.pricing, { 'local-llama': { inputPerMTok: 0.5, outputPerMTok: 1.5 } });
    assert.equal((await chat(capped.body.key, 'local-llama')).status, 200, 'priced now: served under the USD budget');
    await page.locator(`tr[data-id="${labId}"]`).getByRole('button', { name: 'Prices of Lab box' }).getByText('Prices (1)').waitFor();

    // ---------------------------------------------------------------- Custom ranges
    await nav('Usage');
    await page.getByTestId('usage-custom').click();
    await page.getByTestId('usage-from').fill(local(Date.now() - 3_600_000));
    await page.getByRole('button', { name: 'Apply range' }).click();
    await page.waitForFunction(() => location.hash.includes('from='), null, { timeout: 10_000 });
    await page.getByTestId('usage-totals').waitFor({ timeout: 10_000 });
    assert.match(await page.getByTestId('usage-totals').innerText(), /requests\s+[1-9]/i);
    await page.getByTestId('usage-from').fill(local(Date.now() - 2 * 86_400_000));
    await page.getByTestId('usage-to').fill(local(Date.now() - 86_400_000));
    await page.getByRole('button', { name: 'Apply range' }).click();
    await page.getByText('No requests in this range').waitFor({ timeout: 10_000 });
    assert.deepEqual(await overflowing(page), [], 'Usage with its range pickers fits 800×600');

    await nav('Logs');
    await page.locator('#log-range').selectOption('custom');
    await page.getByTestId('logs-from').fill(local(Date.now() + 60_000));
    await page.getByTestId('logs-to').fill(local(Date.now() - 60_000));
    await page.getByRole('button', { name: 'Apply range' }).click();
    await page.getByText('The end must be after the start.').waitFor();
    await page.getByTestId('logs-from').fill(local(Date.now() - 2 * 86_400_000));
    await page.getByRole('button', { name: 'Apply range' }).click();
    await page.getByText('The end must be after the start.').waitFor({ state: 'hidden' });
    await page.getByTestId('logs-to').fill(local(Date.now() - 86_400_000));
    await page.getByRole('button', { name: 'Apply range' }).click();
    await page.waitForFunction(() => location.hash.includes('range=custom') && location.hash.includes('to='), null, { timeout: 10_000 });
    await page.getByText('No requests yet').waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('a[data-fix="set_price"]').count(), 0, 'yesterday has none of today’s rows');
    await page.getByTestId('logs-to').fill('');
    await page.getByRole('button', { name: 'Apply range' }).click();
    await page.locator('a[data-fix="set_price"]').first().waitFor({ timeout: 10_000 });
    assert.deepEqual(await overflowing(page), [], 'Logs with its range pickers fits 800×600');

    // ---------------------------------------------------------------- A viewer
    const vpage = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    vpage.on('pageerror', (e) => errors.push(String(e)));
    await vpage.goto(`${g.base}/dashboard/#token=${encodeURIComponent(viewerToken)}`);
    const vnav = (label) => vpage.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: label, exact: true }).click();
    await vnav('Settings');
    await vpage.getByTestId('settings-readonly').waitFor({ timeout: 10_000 });
    await vpage.getByTestId('settings-form').waitFor();
    assert.equal(await vpage.locator('#set-requireApiKey').isDisabled(), true, 'a viewer cannot change a setting');
    assert.equal(await vpage.getByRole('button', { name: 'Save changes' }).count(), 0);
    await vnav('API Keys');
    await vpage.locator(`tr[data-key-id="${ciKey.id}"] [data-testid="key-expiry"]`).waitFor({ timeout: 10_000 });
    const vrotate = vpage.locator(`tr[data-key-id="${ciKey.id}"]`).getByRole('button', { name: /^Rotate key ci bot/ });
    assert.equal(await vrotate.isDisabled(), true, 'a viewer cannot rotate');
    assert.match(await vrotate.getAttribute('title'), /Only an admin/, 'and is told why');
    await vnav('Logs');
    await vpage.locator('table').first().waitFor({ timeout: 10_000 });
    assert.equal(await vpage.locator('a[data-fix="set_price"]').count(), 0, 'a viewer is not offered a fix they cannot make');
    await vpage.close();

    assert.deepEqual(errors, [], 'no page errors');
  } catch (err) {
    await snap(page, 'FAILED-settings-keys');
    throw err;
  }
});
