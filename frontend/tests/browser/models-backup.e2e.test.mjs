// Browser test of the Connections page's Models dialog and the Backup &
// Restore page against the real headless gateway: search a connection's
// models, hide one and alias another, and see /v1/models change; download a
// backup, refuse a wrong passphrase, preview a restore and apply it to the
// running gateway.
//
//   cd frontend && npm run test:browser     (OMNIROUTE_BIN, CHROMIUM_BIN as in dashboard.e2e)

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { launchChromium, management, overflowing, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('models');

/** The pages and the dialog at the sizes the dashboard supports overflow nowhere. */
async function checkSizes(page, what, open) {
  const problems = [];
  for (const [w, hgt] of [[1280, 800], [1024, 768], [800, 600]]) {
    await page.setViewportSize({ width: w, height: hgt });
    await open();
    await page.waitForTimeout(200);
    const over = await overflowing(page);
    if (over.length) problems.push(`${what} at ${w}×${hgt}:\n  ${over.slice(0, 6).join('\n  ')}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.deepEqual(problems, []);
}

test('search, hide and alias a connection’s models; back up and restore from the dashboard', async () => {
  const g = await startGateway(tmp);
  const mgmt = management(g.base, g.token);
  const { body: keyBody } = await mgmt('GET', '/api/keys/default');
  const clientKey = keyBody.key;
  assert.ok(clientKey, 'the default client key');
  const modelIDs = async () => {
    const res = await fetch(g.base + '/v1/models', { headers: { Authorization: `Bearer ${clientKey}` } });
    return (await res.json()).data.map((m) => m.id);
  };
  const created = await mgmt('POST', '/api/providers', {
    provider: 'openai-compatible', name: 'Lab', apiKey: 'sk-lab-secret-value', baseUrl: 'http://127.0.0.1:9/v1',
    models: ['gpt-4o', 'gpt-4o-mini', 'o3-mini', 'llama-3.3-70b'], discoverModels: false,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.ok((await modelIDs()).includes('gpt-4o-mini'));

  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(g.link);
  const nav = page.getByRole('navigation', { name: 'Dashboard pages' });
  await nav.getByRole('link', { name: 'Connections', exact: true }).click();

  // Models: search narrows the list; hide one; alias another.
  const row = page.getByRole('row', { name: /Lab/ });
  await row.getByRole('button', { name: 'Manage models of Lab' }).click();
  const dialog = page.getByTestId('models-dialog');
  await dialog.getByRole('searchbox', { name: 'Search models' }).fill('mini');
  await dialog.getByTestId('models-count').getByText('2 of 4 models match · 0 hidden').waitFor();
  const items = await dialog.getByTestId('model-manage-list').locator('li code').allInnerTexts();
  assert.deepEqual(items, ['gpt-4o-mini', 'o3-mini']);
  await dialog.getByRole('button', { name: 'Hide gpt-4o-mini' }).click();
  await dialog.getByRole('button', { name: 'Show gpt-4o-mini' }).waitFor();
  await dialog.getByTestId('models-count').getByText('2 of 4 models match · 1 hidden').waitFor();
  await dialog.getByLabel('Alias', { exact: true }).fill('fast');
  await dialog.getByLabel('Model of the alias').fill('o3-mini');
  await dialog.getByRole('button', { name: 'Add alias' }).click();
  await dialog.getByTestId('alias-list').getByText('fast').waitFor();
  // The dialog fits an 800×600 window.
  await page.setViewportSize({ width: 800, height: 600 });
  const box = await page.getByRole('dialog').boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 800 && box.y >= 0 && box.y + box.height <= 600, `dialog inside the window: ${JSON.stringify(box)}`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await dialog.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved the models of “Lab”: 1 hidden.').waitFor({ timeout: 10_000 });
  const managed = row.getByTestId('models-managed');
  await managed.waitFor({ state: 'attached' });
  assert.equal(await managed.textContent(), '1 hidden · aliases: fast → o3-mini', 'the row says what was hidden and aliased');

  let ids = await modelIDs();
  assert.ok(!ids.includes('gpt-4o-mini'), `hidden model gone from /v1/models: ${ids}`);
  assert.ok(!ids.includes('openai-compatible/gpt-4o-mini'), 'and its provider/ name');
  assert.ok(ids.includes('fast') && ids.includes('gpt-4o') && ids.includes('o3-mini'), `alias and the others listed: ${ids}`);
  const routed = await fetch(g.base + '/v1/chat/completions', {
    method: 'POST', headers: { Authorization: `Bearer ${clientKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(routed.status, 404, 'a hidden model is not routed');
  assert.equal((await routed.json()).error.code, 'MODEL_NOT_FOUND');

  // A bad alias is refused with the gateway's words.
  await row.getByRole('button', { name: 'Manage models of Lab' }).click();
  await dialog.getByLabel('Alias', { exact: true }).fill('gpt-4o');
  await dialog.getByLabel('Model of the alias').fill('o3-mini');
  await dialog.getByRole('button', { name: 'Add alias' }).click();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.getByText('alias "gpt-4o" is already a model of this connection').waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  await checkSizes(page, 'Connections', async () => {});
  await row.getByRole('button', { name: 'Manage models of Lab' }).click();
  await checkSizes(page, 'Models dialog', async () => {});
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // Backup & Restore: download, then a wrong passphrase, a preview and a restore.
  await nav.getByRole('link', { name: 'Backup & Restore', exact: true }).click();
  const backupCard = page.getByTestId('backup-card');
  await backupCard.getByLabel('Passphrase', { exact: true }).fill('browser passphrase');
  await backupCard.getByLabel('Repeat the passphrase').fill('browser passphrase');
  const [download] = await Promise.all([page.waitForEvent('download'), backupCard.getByRole('button', { name: 'Download backup' }).click()]);
  const file = path.join(tmp, 'backup.json');
  await download.saveAs(file);
  const text = readFileSync(file, 'utf8');
  assert.match(text, /"format":"omniroute-backup"/);
  assert.doesNotMatch(text, /sk-lab-secret-value/, 'no plain secret in the file');
  await page.setViewportSize({ width: 800, height: 600 });
  const noOverflow = await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
  assert.ok(noOverflow, 'the page fits 800 px');
  await page.setViewportSize({ width: 1280, height: 800 });

  // The connection is deleted after the backup: the restore brings it back.
  assert.equal((await mgmt('DELETE', `/api/providers/${created.body.connection.id}`)).status, 200);
  assert.ok(!(await modelIDs()).includes('fast'));

  const restoreCard = page.getByTestId('restore-card');
  await restoreCard.getByLabel('Backup file').setInputFiles(file);
  await restoreCard.getByLabel('Passphrase').fill('not the passphrase');
  await restoreCard.getByRole('button', { name: 'Preview restore' }).click();
  await restoreCard.getByText(/wrong passphrase/).waitFor();
  assert.equal(await restoreCard.getByRole('button', { name: 'Restore now' }).isDisabled(), true);

  await restoreCard.getByLabel('Passphrase').fill('browser passphrase');
  await restoreCard.getByRole('button', { name: 'Preview restore' }).click();
  await page.getByTestId('restore-preview').getByText('connections: 1 added, 0 changed, 0 removed').waitFor();
  await page.getByTestId('restore-preview').getByText(`+ Lab (${created.body.connection.id})`).waitFor();
  await checkSizes(page, 'Backup & Restore with a preview', async () => {});
  assert.ok(!(await modelIDs()).includes('fast'), 'a preview changes nothing');

  await restoreCard.getByRole('button', { name: 'Restore now' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore now' }).click();
  await restoreCard.getByText('Restored. The gateway serves the backup’s configuration now.').waitFor({ timeout: 15_000 });
  ids = await modelIDs();
  assert.ok(ids.includes('fast') && !ids.includes('gpt-4o-mini'), `restored: alias back, hidden model still hidden: ${ids}`);
  assert.deepEqual(errors, []);
});
