// Browser test of "Sign in to GitHub Copilot" on the Connections page against
// the real headless gateway and a fake GitHub (device flow, user, Copilot
// token exchange, the Copilot endpoint's model list): the card shows the
// code and the page to enter it on, waits, and adds the connection once the
// login is approved on "GitHub"; nothing overflows at 800×600.
//
//   cd frontend && npm run test:browser     (OMNIROUTE_BIN, CHROMIUM_BIN as in dashboard.e2e)

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, test } from 'node:test';
import { launchChromium, startGateway, tempDir } from './harness.mjs';

const CLIENT_ID = 'Iv1.browser';
const GITHUB_TOKEN = 'gho_browser_token';
const USER_CODE = 'BRWS-1234';

const tmp = tempDir('copilot');
let fake;
after(() => fake?.close());

/** A fake GitHub + Copilot: pending until approve(), then the token. */
function startFakeGitHub() {
  const state = { approved: false, polls: 0, exchanges: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = (status, v) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      const form = new URLSearchParams(body);
      const base = `http://127.0.0.1:${server.address().port}`;
      const github = req.headers.authorization === `token ${GITHUB_TOKEN}`;
      if (req.method === 'POST' && req.url === '/login/device/code' && form.get('client_id') === CLIENT_ID) {
        return json(200, { device_code: 'dc-browser', user_code: USER_CODE, verification_uri: `${base}/login/device`, expires_in: 900, interval: 1 });
      }
      if (req.method === 'POST' && req.url === '/login/oauth/access_token' && form.get('device_code') === 'dc-browser') {
        state.polls++;
        return json(200, state.approved ? { access_token: GITHUB_TOKEN, token_type: 'bearer', scope: 'read:user' } : { error: 'authorization_pending' });
      }
      if (req.method === 'GET' && req.url === '/user' && github) return json(200, { login: 'octo-browser', id: 77 });
      if (req.method === 'GET' && req.url === '/copilot_internal/v2/token' && github) {
        state.exchanges++;
        return json(200, { token: `cpt-${state.exchanges}`, expires_at: Math.floor(Date.now() / 1000) + 1800, refresh_in: 1500, endpoints: { api: base } });
      }
      if (req.method === 'GET' && req.url === '/models' && req.headers['copilot-integration-id'] === 'vscode-chat') {
        return json(200, { object: 'list', data: [{ id: 'gpt-4o', object: 'model' }, { id: 'claude-sonnet-4', object: 'model' }] });
      }
      json(404, { message: 'Not Found' });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, state, close: () => server.close() })));
}

test('sign in to GitHub Copilot from the Connections page', async () => {
  fake = await startFakeGitHub();
  const fakeBase = `http://127.0.0.1:${fake.server.address().port}`;
  const g = await startGateway(tmp, {
    OMNIROUTE_GITHUB_COPILOT_OAUTH_DEVICE_CODE_URL: `${fakeBase}/login/device/code`,
    OMNIROUTE_GITHUB_COPILOT_OAUTH_ACCESS_TOKEN_URL: `${fakeBase}/login/oauth/access_token`,
    OMNIROUTE_GITHUB_COPILOT_OAUTH_USER_URL: `${fakeBase}/user`,
    OMNIROUTE_GITHUB_COPILOT_OAUTH_TOKEN_URL: `${fakeBase}/copilot_internal/v2/token`,
    OMNIROUTE_GITHUB_COPILOT_OAUTH_CLIENT_ID: CLIENT_ID,
  });
  const mgmt = async (p) => (await fetch(g.base + p, { headers: { Authorization: `Bearer ${g.token}` } })).json();

  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(g.link);
  await page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name: 'Connections', exact: true }).click();

  const card = page.getByTestId('copilot-card');
  await card.getByTestId('copilot-start').click();
  await assert.doesNotReject(card.getByTestId('copilot-code').waitFor());
  assert.equal(await card.getByTestId('copilot-code').textContent(), USER_CODE);
  assert.equal(await card.getByTestId('copilot-uri').getAttribute('href'), `${fakeBase}/login/device`);
  assert.equal(await card.getByTestId('copilot-start').isDisabled(), true);

  // Nothing wider than an 800 px window while the code is shown.
  await page.setViewportSize({ width: 800, height: 600 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page overflows by ${overflow}px at 800×600`);

  // Approved on "GitHub" once the gateway has asked at least once.
  const t0 = Date.now();
  while (fake.state.polls === 0 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
  assert.ok(fake.state.polls > 0, 'the gateway never polled GitHub');
  fake.state.approved = true;
  await card.getByTestId('copilot-status').getByText('Added “GitHub Copilot (octo-browser)”.').waitFor({ timeout: 15_000 });
  assert.equal(await card.getByTestId('copilot-start').isDisabled(), false);

  const { connections } = await mgmt('/api/providers');
  assert.equal(connections.length, 1);
  assert.equal(connections[0].provider, 'github-copilot');
  assert.equal(connections[0].baseUrl, fakeBase);
  assert.deepEqual([...connections[0].servedModels].sort(), ['claude-sonnet-4', 'gpt-4o']);
  assert.ok(!JSON.stringify(connections[0]).includes(GITHUB_TOKEN), 'the GitHub token is returned by the API');
  // The list shows the new connection.
  await page.getByRole('cell', { name: /GitHub Copilot \(octo-browser\)/ }).first().waitFor({ timeout: 5_000 });
  assert.deepEqual(errors, []);
});
