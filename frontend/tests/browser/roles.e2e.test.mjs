// Browser test of issue 42 item 5 (the role part): on EVERY page of the nav
// (read from the dashboard itself, so a new page is covered without a list
// here) a viewer and an operator are never offered a control whose request
// the gateway refuses them. The test fills every empty field, clicks every
// enabled button of the page (and the confirm / save buttons of any dialog
// that opens), accepts native confirms, and records every answer: none may
// be a 403. It also checks the controls are there, disabled with the reason
// (the gateway's route table via GET /api/session), and that an admin sees
// none of them disabled for its role.
//
//   cd frontend && node --test tests/browser/roles.e2e.test.mjs

import assert from 'node:assert/strict';
import { launchChromium, management, snap as snapPage, startFakeUpstream, startGateway, stepper, tempDir } from './harness.mjs';

const STEP_TIMEOUT = 20_000;
const S = { base: '', token: '', fake: '', key: '', link: '', browser: null, page: null, errors: [], pages: [] };
const step = stepper('roles', () => S.page);
const mgmt = (method, p, body) => management(S.base, S.token)(method, p, body);

/** A value a field accepts, so a form is really submitted when its button is clicked. */
function valueFor(type, id) {
  if (type === 'url' || /url/i.test(id)) return `${S.fake}/v1`;
  if (type === 'number' || /priority|concurrent|retries|ttl|status|minutes|kib|mib/i.test(id)) return '2';
  if (type === 'email' || /email/i.test(id)) return 'probe@example.com';
  if (type === 'password' || /pass/i.test(id)) return 'probe-passphrase-1';
  return 'probe';
}

/** Fills the empty, enabled, visible text fields of `main` (and of an open dialog). */
async function fillEmpty(page) {
  await page.evaluate((values) => {
    for (const el of document.querySelectorAll('main input, main textarea, dialog[open] input, dialog[open] textarea')) {
      if (el.disabled || el.readOnly || el.value || el.offsetParent === null) continue;
      if (['checkbox', 'radio', 'file', 'hidden', 'submit', 'button', 'search', 'date', 'datetime-local'].includes(el.type)) continue;
      const key = el.type === 'url' || /url/i.test(el.id) ? 'url' : el.type === 'number' ? 'number' : el.type === 'email' ? 'email' : el.type === 'password' ? 'password' : 'text';
      el.value = values[key];
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    }
  }, { url: valueFor('url', ''), number: valueFor('number', ''), email: valueFor('email', ''), password: valueFor('password', ''), text: valueFor('text', '') });
}

/** Waits for the page's loading states to end (never for network idle: the event stream stays open). */
async function settle(page) {
  await page.locator('main .loading').first().waitFor({ state: 'detached', timeout: 5_000 }).catch(() => {});
  await page.waitForTimeout(250);
}

/** Opens a page of the dashboard by its nav path and waits for its heading. */
async function visit(page, path) {
  await page.goto(`${S.base}/dashboard/#${path}`);
  await page.locator('main h1').first().waitFor();
  await settle(page);
}

/** Signs `email` in on a new context; every 403 answer is recorded in `forbidden` with the page and control. */
async function signIn(email, password) {
  const context = await S.browser.newContext({ viewport: { width: 1280, height: 860 }, reducedMotion: 'reduce' });
  context.setDefaultTimeout(STEP_TIMEOUT);
  const page = await context.newPage();
  const seen = { where: 'sign-in', forbidden: [], writes: 0 };
  page.on('response', (r) => {
    const req = r.request();
    if (!r.url().startsWith(`${S.base}/api/`)) return;
    if (req.method() !== 'GET') seen.writes++;
    if (r.status() === 403) seen.forbidden.push(`${req.method()} ${new URL(r.url()).pathname} (${seen.where})`);
  });
  page.on('pageerror', (err) => S.errors.push(`${email}: ${err.message}`));
  page.on('dialog', (d) => void d.accept().catch(() => {}));
  await page.goto(`${S.base}/dashboard/`);
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  return { context, page, seen };
}

/**
 * On each page: fill the empty fields, then click every enabled button of
 * `main` once (by position, re-read after each click: pages re-render), and
 * in a dialog that opens its confirm / save buttons. Returns how many
 * controls were clicked and how many were disabled for the role.
 */
async function clickEverything(page, seen, path) {
  seen.where = path;
  await visit(page, path);
  const denied = await page.locator('main [data-denied], main [data-testid="role-denied"]').count();
  let clicked = 0;
  const done = new Set();
  for (let round = 0; round < 200; round++) {
    await fillEmpty(page);
    const buttons = page.locator('main button:not([disabled])');
    const n = await buttons.count();
    let target = -1;
    let label = '';
    for (let i = 0; i < n; i++) {
      const b = buttons.nth(i);
      const l = `${(await b.getAttribute('aria-label').catch(() => null)) ?? (await b.innerText().catch(() => ''))}#${i}`;
      if (done.has(l) || !(await b.isVisible().catch(() => false))) continue;
      target = i;
      label = l;
      break;
    }
    if (target < 0) break;
    done.add(label);
    seen.where = `${path}: ${label}`;
    await buttons.nth(target).click({ timeout: 3_000 }).catch(() => {});
    clicked++;
    await page.waitForTimeout(150);
    // A dialog that opened: fill it and press its confirm / save buttons.
    const dlg = page.locator('dialog[open]').last();
    if (await dlg.count()) {
      await fillEmpty(page);
      for (const b of await dlg.locator('button:not([disabled])').all()) {
        const t = ((await b.innerText().catch(() => '')) || (await b.getAttribute('aria-label')) || '').trim();
        if (/^(cancel|close|✕|keep|done)/i.test(t)) continue;
        seen.where = `${path}: ${label} → ${t}`;
        await b.click({ timeout: 2_000 }).catch(() => {});
        await page.waitForTimeout(150);
      }
      await page.keyboard.press('Escape').catch(() => {});
      await page.keyboard.press('Escape').catch(() => {});
    }
    await settle(page);
    if (!page.url().includes(`#${path}`)) await visit(page, path); // a button that navigated
  }
  return { clicked, denied };
}

step('start the fake upstream, the gateway and Chromium; a state with something on every page', async () => {
  const tmp = tempDir('roles');
  S.fake = (await startFakeUpstream(tmp)).base;
  const gw = await startGateway(tmp);
  Object.assign(S, { base: gw.base, token: gw.token, key: gw.key, link: gw.link });
  for (const [name, prefix] of [['Fine', 'fine'], ['Spare', 'spare']]) {
    const r = await mgmt('POST', '/api/providers', { name, provider: 'openai-compatible', apiKey: `key-${prefix}`, baseUrl: `${S.fake}/v1`, prefix, models: ['gpt-4o-mini'], verify: false });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  const combo = await mgmt('POST', '/api/combos', { name: 'team', strategy: 'priority', targets: [{ model: 'fine/gpt-4o-mini' }, { model: 'spare/gpt-4o-mini' }] });
  assert.equal(combo.status, 201, JSON.stringify(combo.body));
  assert.equal((await mgmt('POST', '/api/keys', { name: 'laptop' })).status, 201);
  const chat = await fetch(`${S.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${S.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'fine/gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
  });
  assert.equal(chat.status, 200, await chat.text());
  for (const [email, role] of [['vic@example.com', 'viewer'], ['otto@example.com', 'operator']]) {
    assert.equal((await mgmt('POST', '/api/users', { email, name: role, role, password: `${role}-password-1` })).status, 201);
  }
  S.browser = await launchChromium();
  const context = await S.browser.newContext({ viewport: { width: 1280, height: 860 }, reducedMotion: 'reduce' });
  context.setDefaultTimeout(STEP_TIMEOUT);
  S.page = await context.newPage();
  S.page.on('pageerror', (err) => S.errors.push(`admin: ${err.message}`));
  await S.page.goto(S.link);
  await S.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  // Every page of the dashboard, hidden nav entries included.
  S.pages = await S.page.locator('nav a[data-path]').evaluateAll((as) => as.map((a) => a.dataset.path));
  assert.ok(S.pages.length >= 15, S.pages.join(' '));
  assert.ok(S.pages.includes('/settings'), `the Settings page is visited: ${S.pages.join(' ')}`);
});

step('an admin sees no control disabled for its role, and the writes are there', async () => {
  const page = S.page;
  for (const path of S.pages) {
    await visit(page, path);
    assert.equal(await page.locator('[data-testid="role-denied"]').count(), 0, `${path}: an admin is told it may not`);
    const denied = await page.locator('main [data-denied]').evaluateAll((els) => els.map((e) => `${e.textContent} — ${e.dataset.denied}`));
    assert.deepEqual(denied, [], `${path}: disabled for an admin`);
  }
  await visit(page, '/connections');
  assert.equal(await page.getByRole('button', { name: 'Add connection' }).isEnabled(), true);
  await visit(page, '/combos');
  assert.equal(await page.getByRole('button', { name: 'New combo' }).isEnabled(), true);
  assert.equal(await page.getByRole('button', { name: 'Delete team' }).isEnabled(), true);
  await visit(page, '/keys');
  assert.equal(await page.getByRole('button', { name: 'Create key' }).isEnabled(), true);
  await visit(page, '/backup');
  assert.equal(await page.getByRole('button', { name: 'Download backup' }).isEnabled(), true);
});

for (const [email, role] of [['vic@example.com', 'viewer'], ['otto@example.com', 'operator']]) {
  step(`${role === 'operator' ? 'an' : 'a'} ${role} clicks every enabled control of every page and never gets a 403`, async (t) => {
    const { context, page, seen } = await signIn(email, `${role}-password-1`);
    S.page = page;
    let clicked = 0;
    let denied = 0;
    for (const path of S.pages) {
      const r = await clickEverything(page, seen, path);
      clicked += r.clicked;
      denied += r.denied;
    }
    t.diagnostic(`${role}: ${S.pages.length} pages, ${clicked} controls clicked, ${denied} shown disabled with the reason, ${seen.writes} writes sent`);
    assert.deepEqual(seen.forbidden, [], `a ${role} was offered a control the gateway refuses`);
    assert.ok(clicked >= 20, `only ${clicked} controls clicked`);
    assert.ok(denied >= 10, `only ${denied} controls shown disabled with the reason`);
    if (role === 'operator') assert.ok(seen.writes > 0, 'the operator sent the writes it may');
    await snapPage(page, `roles-${role}-last`);
    await context.close();
    S.page = null;
  });
}

step(`what a viewer is told, page by page: the reason, never a bare disabled button`, async () => {
  const { context, page, seen } = await signIn('vic@example.com', 'viewer-password-1');
  S.page = page;
  await visit(page, '/connections');
  await page.getByTestId('role-denied').filter({ hasText: 'Adding a connection: Only an admin can do this (you are a viewer).' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Add connection' }).count(), 0);
  await snapPage(page, 'roles-viewer-connections');
  await visit(page, '/combos');
  const newCombo = page.getByRole('button', { name: /^New combo/ });
  assert.equal(await newCombo.isDisabled(), true);
  assert.equal(await newCombo.getAttribute('title'), 'Only an admin can do this (you are a viewer).');
  assert.equal(await page.getByRole('button', { name: /^Delete team/ }).isDisabled(), true);
  await visit(page, '/keys');
  await page.getByTestId('role-denied').filter({ hasText: 'Creating a key: Only an admin' }).waitFor();
  await visit(page, '/resilience');
  await page.getByTestId('role-denied').filter({ hasText: 'Changing these settings: Only an admin' }).waitFor();
  await snapPage(page, 'roles-viewer-resilience');
  assert.equal(await page.getByRole('button', { name: /^Reset breakers/ }).getAttribute('title'), 'Needs an operator or an admin (you are a viewer).');
  await visit(page, '/settings');
  await page.getByTestId('settings-readonly').filter({ hasText: 'Changing settings: Only an admin can do this (you are a viewer).' }).waitFor();
  assert.equal(await page.locator('#set-requireApiKey').getAttribute('title'), 'Only an admin can do this (you are a viewer).');
  assert.equal(await page.getByRole('button', { name: 'Save changes' }).count(), 0);
  await visit(page, '/backup');
  await page.getByTestId('role-denied').filter({ hasText: 'Backing up: Only an admin' }).waitFor();
  // A page the role cannot use says why when a link leads there.
  await visit(page, '/users');
  await page.getByTestId('role-denied').filter({ hasText: 'This page: Only an admin can do this (you are a viewer).' }).waitFor();
  await snapPage(page, 'roles-viewer-users');
  assert.deepEqual(seen.forbidden, []);
  await context.close();
  S.page = null;
});

step('no console errors', async () => {
  assert.deepEqual(S.errors, []);
});
