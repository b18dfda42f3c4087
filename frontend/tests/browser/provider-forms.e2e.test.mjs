// Browser test of the generic connection form (views/provider-form.ts): an
// Azure OpenAI and an AWS Bedrock connection are added purely through the
// form the dashboard renders from GET /api/providers/catalog (a deployments
// map, a select, key-less credentials in the provider's own fields, a secret
// never shown back), against the fake upstream's Azure and Bedrock routes;
// the gateway's field-precise refusals are shown under the field they name.
//
//   cd frontend && node --test tests/browser/provider-forms.e2e.test.mjs   (OMNIROUTE_BIN, CHROMIUM_BIN as in dashboard.e2e)

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChromium, management, snap, startFakeUpstream, startGateway, tempDir } from './harness.mjs';

const tmp = tempDir('forms');
const AWS_KEY_ID = 'AKIAFAKEBROWSER01';
const AWS_SECRET = 'browser-secret-access-key';
const AZURE_KEY = 'azure-browser-key';

test('Azure OpenAI and Bedrock connections through the generic form, errors under their fields', async () => {
  const fake = await startFakeUpstream(tmp);
  const cfg = await fetch(`${fake.base}/_fake/config`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ awsCredentials: { [AWS_KEY_ID]: { secret: AWS_SECRET } } }),
  });
  assert.equal(cfg.status, 204);
  const g = await startGateway(tmp);
  const mgmt = management(g.base, g.token);
  const browser = await launchChromium();
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(g.link);
    await page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: 'Connections', exact: true }).click();
    const add = page.locator('form', { has: page.getByRole('heading', { name: 'Add connection' }) });
    const fields = add.getByTestId('provider-fields');
    const errorOf = (label) => fields.locator('.field', { has: page.getByLabel(label) }).locator('.field-error');

    // Azure (typed by its alias): the key, the api-version, the deployments map and the API select, all from the schema.
    await add.getByLabel('Provider').fill('azure');
    await add.locator('[data-testid="provider-fields"][data-provider="azure-openai"]').waitFor({ state: 'visible' });
    assert.deepEqual(await fields.getByLabel('API', { exact: true }).locator('option').allInnerTexts(), ['default (chat)', 'chat', 'responses']);
    await add.getByLabel('Name').fill('azure browser');
    await fields.getByLabel(/^API key/).fill(AZURE_KEY);
    await add.getByLabel('Base URL').fill(fake.base);
    await fields.getByLabel('API version', { exact: true }).fill('2023-05-15');
    await fields.getByLabel('API', { exact: true }).selectOption('chat');
    // A line that is no pair is refused by the form itself, under the map.
    await fields.getByLabel('Deployments').fill('gpt-4o');
    await add.getByRole('button', { name: 'Add connection' }).click();
    await errorOf('Deployments').filter({ hasText: 'Line 1: write model = deployment.' }).waitFor({ timeout: 5_000 });
    // A deployment name Azure cannot have is the gateway's refusal, shown under the same field.
    await fields.getByLabel('Deployments').fill('gpt-4o = bad deployment!');
    await add.getByRole('button', { name: 'Add connection' }).click();
    await errorOf('Deployments').filter({ hasText: /a deployment name is 1-64 letters/ }).waitFor({ timeout: 10_000 });
    assert.equal(await fields.getByLabel('Deployments').getAttribute('aria-invalid'), 'true');
    await fields.getByLabel('Deployments').fill('gpt-4o = dep-4o');
    await add.getByRole('button', { name: 'Add connection' }).click();
    await page.getByText('Added connection “azure browser”.').waitFor({ timeout: 15_000 });
    let { body } = await mgmt('GET', '/api/providers');
    const az = body.connections.find((c) => c.name === 'azure browser');
    assert.equal(az.provider, 'azure-openai', 'the alias names the catalogue row');
    assert.deepEqual(az.providerSpecificData, { apiVersion: '2023-05-15', api: 'chat', deployments: { 'gpt-4o': 'dep-4o' } });
    const last = await (await fetch(`${fake.base}/_fake/last?key=${AZURE_KEY}`)).json();
    assert.match(last.path, /^\/openai\/deployments\/dep-4o\//, 'the check reached the deployment');

    // Bedrock: no API key field (the credentials are the provider's own fields).
    await add.getByLabel('Provider').fill('bedrock');
    await add.locator('[data-testid="provider-fields"][data-provider="bedrock"]').waitFor({ state: 'visible' });
    assert.equal(await fields.getByLabel(/^API key/).count(), 0, 'no API key field');
    await add.getByLabel('Name').fill('bedrock browser');
    // Required fields the form checks itself (none of them is optional without a profile).
    await add.getByRole('button', { name: 'Add connection' }).click();
    await errorOf('AWS region').filter({ hasText: 'Enter the AWS region.' }).waitFor({ timeout: 5_000 });
    assert.equal(await errorOf('Secret access key').innerText(), 'Enter the Secret access key.');
    await fields.getByLabel('AWS region').fill('us-east-1');
    await fields.getByLabel('Access key ID').fill('not-a-key-id');
    await fields.getByLabel('Secret access key').fill(AWS_SECRET);
    await add.getByLabel('Base URL').fill(fake.base);
    await add.getByRole('button', { name: 'Add connection' }).click();
    // The server's refusal in a user's words: the field's label, not its path (issue 41).
    await errorOf('Access key ID').filter({ hasText: /must be 16-128 capital letters/ }).waitFor({ timeout: 10_000 });
    assert.equal(await errorOf('Access key ID').innerText(), 'Access key ID must be 16-128 capital letters and digits (an AWS access key ID, such as AKIA…)');
    assert.equal(await add.locator('.form-status .alert-code').innerText(), 'INVALID_PROVIDER_DATA', 'the code, in the box');
    await snap(page, 'provider-forms-add');
    assert.equal(await errorOf('AWS region').innerText(), '', 'only the field at fault is marked');
    await fields.getByLabel('Access key ID').fill(AWS_KEY_ID);
    await add.getByRole('button', { name: 'Add connection' }).click();
    await page.getByText('Added connection “bedrock browser”.').waitFor({ timeout: 15_000 });
    ({ body } = await mgmt('GET', '/api/providers'));
    const br = body.connections.find((c) => c.name === 'bedrock browser');
    assert.deepEqual([br.provider, br.providerSpecificData.region, br.providerSpecificData.accessKeyId], ['bedrock', 'us-east-1', AWS_KEY_ID]);
    assert.equal(br.providerSpecificData.secretAccessKey, undefined, 'the secret is sealed, not stored in the object');
    const row = page.getByRole('row', { name: /bedrock browser/ });
    await row.getByTestId('account').filter({ hasText: `region us-east-1 · key ${AWS_KEY_ID}` }).waitFor({ timeout: 10_000 });

    // Edit: the secret is never shown back, only said to be stored; a bad region is refused under its field.
    await row.getByRole('button', { name: /^Edit / }).click();
    const dialog = page.getByRole('dialog');
    const secret = dialog.getByLabel('Secret access key');
    assert.deepEqual([await secret.inputValue(), await secret.getAttribute('placeholder')], ['', 'stored — replace']);
    assert.equal(await dialog.getByLabel('AWS region').inputValue(), 'us-east-1');
    await dialog.getByLabel('AWS region').fill('moon-base');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    const regionError = dialog.locator('.field', { has: page.getByLabel('AWS region') }).locator('.field-error');
    await regionError.filter({ hasText: /must be an AWS region/ }).waitFor({ timeout: 10_000 });
    // The same as the Add form shows: the field's words under it, the stable code in the form's error box.
    assert.equal(await regionError.innerText(), 'AWS region must be an AWS region such as us-east-1', 'its label, no code');
    assert.equal(await dialog.locator('.form-status .alert-code').innerText(), 'INVALID_PROVIDER_DATA', 'the code, in the box');
    assert.equal(await dialog.getByLabel('AWS region').getAttribute('aria-invalid'), 'true');
    await snap(page, 'provider-forms-edit');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.doesNotMatch(await page.content(), new RegExp(`${AWS_SECRET}|${AZURE_KEY}`), 'no secret reaches the page');
    assert.deepEqual(errors, []);
  } catch (err) {
    await snap(page, 'FAILED-provider-forms');
    throw err;
  }
});
