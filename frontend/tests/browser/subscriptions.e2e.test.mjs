// Browser test of the Connections page's subscription parts against the real
// headless gateway: import a Claude Code login from a temporary HOME through
// "Import a subscription login", then opt the connection into the usage
// wall's low-priority lane in the edit dialog.
//
//   cd frontend && npm run test:browser     (OMNIROUTE_BIN, CHROMIUM_BIN as in dashboard.e2e)

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { launchChromium, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('sub');
const home = path.join(tmp, 'home');

test('import a Claude Code login and opt into the slow lane from the Connections page', async () => {
  const credFile = path.join(home, '.claude', '.credentials.json');
  mkdirSync(path.dirname(credFile), { recursive: true });
  writeFileSync(credFile, JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-browser-test-token', refreshToken: 'rt', expiresAt: 4102444800000 } }));
  writeFileSync(path.join(home, '.claude.json'), JSON.stringify({ oauthAccount: { accountUuid: 'acc-b', emailAddress: 'browser@example.com', organizationUuid: 'org-b' } }));
  const before = readFileSync(credFile, 'utf8');
  const g = await startGateway(tmp);
  const mgmt = async (p) => (await fetch(g.base + p, { headers: { Authorization: `Bearer ${g.token}` } })).json();

  const browser = await launchChromium();
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(g.link);
  await page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: 'Connections', exact: true }).click();

  const card = page.getByTestId('import-card');
  await card.getByLabel('Import from').selectOption('claude-code');
  // The card's choices are the gateway's import sources (GET /api/providers/import), each with its default file.
  const { sources } = await mgmt('/api/providers/import');
  assert.ok(sources.length >= 3, 'the gateway lists its import sources');
  assert.deepEqual(await card.getByLabel('Import from').locator('option').allInnerTexts(), sources.map((s) => s.label));
  for (const s of [...sources].reverse()) {
    await card.getByLabel('Import from').selectOption(s.source);
    assert.equal(await card.getByLabel('Credential file').getAttribute('placeholder'), s.defaultPath);
  }
  assert.equal(sources[0].source, 'claude-code');
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
