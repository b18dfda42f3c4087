// Browser test of the Connections page's Google Cloud connections against the
// real headless gateway, through the generic connection form (rendered from
// the catalogue's schema): a Gemini CLI login imported from a temporary HOME
// shows its account; a Vertex AI connection is added from a service account's
// key file (uploaded) with its region, shows its service account, project and
// region, the key never reaching the page; a key file of the wrong kind is
// refused at its field (the gateway's field-precise error); the Gemini CLI
// login's Code Assist project is set in the edit dialog.
//
//   cd frontend && npm run test:browser     (OMNIROUTE_BIN, CHROMIUM_BIN as in dashboard.e2e)

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { launchChromium, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('google');
const home = path.join(tmp, 'home');

test('Gemini CLI login and Vertex AI service account on the Connections page', async () => {
  const credFile = path.join(home, '.gemini', 'oauth_creds.json');
  mkdirSync(path.dirname(credFile), { recursive: true });
  const idToken = ['{"alg":"RS256"}', '{"sub":"1077","email":"gem@example.com"}', 'sig'].map((s, i) => (i < 2 ? Buffer.from(s).toString('base64url') : s)).join('.');
  writeFileSync(credFile, JSON.stringify({ access_token: 'ya29.browser-gemini-token', refresh_token: '1//rt', expiry_date: 4102444800000, id_token: idToken }));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const saFile = path.join(tmp, 'sa.json');
  writeFileSync(saFile, JSON.stringify({ type: 'service_account', project_id: 'browser-proj', private_key_id: 'k1', private_key: privateKey,
    client_email: 'omni@browser-proj.iam.gserviceaccount.com', token_uri: 'http://127.0.0.1:9/token' }));
  const wrongFile = path.join(tmp, 'user.json');
  writeFileSync(wrongFile, JSON.stringify({ type: 'authorized_user', client_id: 'x', refresh_token: 'y' }));
  const g = await startGateway(tmp);
  const mgmt = async (p) => (await fetch(g.base + p, { headers: { Authorization: `Bearer ${g.token}` } })).json();

  const browser = await launchChromium();
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(g.link);
  await page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: 'Connections', exact: true }).click();

  // The Gemini CLI login, with its account on the row.
  const card = page.getByTestId('import-card');
  await card.getByLabel('Import from').selectOption('gemini-cli');
  await card.getByRole('button', { name: 'Import login' }).click();
  await card.getByText('Added “Gemini CLI (gem@example.com)”.').waitFor({ timeout: 10_000 });
  const login = page.getByRole('row', { name: /Gemini CLI \(gem@example\.com\)/ });
  await login.getByTestId('account').waitFor({ timeout: 10_000 });
  assert.equal(await login.getByTestId('account').innerText(), 'account gem@example.com');

  // Vertex: the key field is the service account's file; the API key field goes.
  const add = page.locator('form', { has: page.getByRole('heading', { name: 'Add connection' }) });
  await add.getByLabel('Provider').fill('vertex');
  await add.locator('[data-testid="provider-fields"][data-provider="vertex"]').waitFor({ state: 'visible' });
  assert.equal(await add.getByLabel('API key').isVisible(), false, 'no API key field for vertex');
  await add.getByLabel('Name').fill('vertex browser');
  await add.getByLabel('Service-account key (JSON)').setInputFiles(wrongFile);
  await add.getByRole('button', { name: 'Add connection' }).click();
  await add.getByTestId('provider-fields').getByText(/must be "service_account"/).waitFor({ timeout: 5_000 });
  assert.equal(await add.getByLabel('Service-account key (JSON)').getAttribute('aria-invalid'), 'true', 'the error is under the key field');
  await add.getByLabel('Service-account key (JSON)').setInputFiles(saFile);
  await add.getByLabel('Region').fill('europe-west4');
  await add.getByRole('button', { name: 'Add connection' }).click();
  const row = page.getByRole('row', { name: /vertex browser/ });
  await row.getByTestId('account').waitFor({ timeout: 15_000 });
  assert.equal(await row.getByTestId('account').innerText(), 'project browser-proj · region europe-west4 · service account omni@browser-proj.iam.gserviceaccount.com');
  assert.doesNotMatch(await page.content(), /PRIVATE KEY|browser-gemini-token/, 'no secret reaches the page');

  // The login's Code Assist project, set in the edit dialog.
  await login.getByRole('button', { name: /^Edit / }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Google Cloud project').fill('my-gcp-project');
  await dialog.getByRole('button', { name: 'Save changes' }).click();
  await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
  const { connections } = await mgmt('/api/providers');
  const gc = connections.find((x) => x.provider === 'gemini-cli');
  assert.equal(gc.providerSpecificData.projectId, 'my-gcp-project');
  assert.equal(gc.providerSpecificData.email, 'gem@example.com', 'other providerSpecificData keys are kept');
  const vx = connections.find((x) => x.provider === 'vertex');
  assert.deepEqual([vx.providerSpecificData.projectId, vx.providerSpecificData.region], ['browser-proj', 'europe-west4']);
  await login.getByText('account gem@example.com · project my-gcp-project').waitFor({ timeout: 10_000 });

  // A region Vertex does not have is refused at its field, in plain words.
  await row.getByRole('button', { name: /^Edit / }).click();
  const vdialog = page.getByRole('dialog');
  await vdialog.getByLabel('Region').fill('moon-base');
  await vdialog.getByRole('button', { name: 'Save changes' }).click();
  await vdialog.locator('.field-error').getByText(/must be a Vertex AI location/).waitFor({ timeout: 10_000 });
  assert.equal(await vdialog.getByLabel('Region').getAttribute('aria-invalid'), 'true');
  await vdialog.getByRole('button', { name: 'Cancel' }).click();
  assert.deepEqual(errors, []);
});
