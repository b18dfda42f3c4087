// The browser specs' shared start-up: paths, free ports, child processes (the
// gateway, the fake upstream) that never outlive the run, temporary folders,
// Chromium, screenshots, the overflow check and the management API.
//
// Env (every spec):
//   OMNIROUTE_BIN       gateway binary (default ../bin/omniroute, built by `make build`)
//   FAKEUPSTREAM_BIN    fake upstream binary (default: built with `go build` into a temp dir)
//   CHROMIUM_BIN        browser (default /usr/bin/chromium)
//   E2E_ARTIFACTS       screenshot folder (default ../tests/e2e/artifacts, gitignored)

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const FRONTEND = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const REPO = path.resolve(FRONTEND, '..');
export const GATEWAY_BIN = path.resolve(FRONTEND, process.env.OMNIROUTE_BIN || '../bin/omniroute');
export const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(FRONTEND, process.env.E2E_ARTIFACTS || '../tests/e2e/artifacts');
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'];

const children = new Set();
const browsers = new Set();
const tempDirs = [];

function killAll(signal) {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    try {
      c.kill(signal);
    } catch {
      /* already gone */
    }
  }
}
// Last resort if the runner dies: never leave a gateway or fake behind.
process.on('exit', () => killAll('SIGKILL'));
// Registered at import, so on the spec's root: an after() called inside a
// test would run when that test ends.
after(async () => {
  await Promise.all([...browsers].map((b) => b.close().catch(() => {})));
  await Promise.all([...children].map(stopProcess));
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** A temporary folder removed when the spec ends. */
export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `omniroute-${prefix}-`));
  tempDirs.push(dir);
  return dir;
}

/** Starts a process and resolves with the first stdout lines `ready` accepts: { child, match, lines }. */
export function startProcess(name, bin, args, env, ready, timeoutMs = 20_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const lines = [];
    let stderr = '';
    const timer = setTimeout(() => {
      reject(new Error(`${name} did not start within ${timeoutMs} ms.\nstdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.stderr.on('data', (b) => (stderr = (stderr + b).slice(-20_000)));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${name}: cannot start ${bin}: ${err.message}`));
    });
    child.on('exit', (code, sig) => {
      children.delete(child);
      clearTimeout(timer);
      reject(new Error(`${name} exited early (code ${code}, signal ${sig}).\nstdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
    });
    let done = false;
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (done) return; // keep draining stdout so the child never blocks on it
      lines.push(line);
      const match = ready(lines);
      if (!match) return;
      done = true;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.on('exit', () => children.delete(child));
      resolve({ child, match, lines });
    });
  });
}

/** SIGTERM, then SIGKILL after 3 s. */
export async function stopProcess(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(t);
}

/** A free loopback TCP port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts the headless gateway on a free port with its own data directory and
 * HOME under `dir` (inherited OMNIROUTE_* variables dropped, `env` added).
 * Resolves with { child, base, token, key, link, env }.
 */
export async function startGateway(dir, env = {}) {
  if (!existsSync(GATEWAY_BIN)) throw new Error(`gateway binary ${GATEWAY_BIN} not found: run \`make build\` in ${REPO} or set OMNIROUTE_BIN`);
  const home = path.join(dir, 'home');
  mkdirSync(home, { recursive: true });
  // The specs run two at a time (npm run test:browser): the free port found
  // here can be taken by the other spec's process before the gateway binds it;
  // then it exits at once saying so, and starts again on another port.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const full = { ...process.env };
    for (const k of Object.keys(full)) if (k.startsWith('OMNIROUTE_')) delete full[k];
    Object.assign(full, {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      OMNIROUTE_DATA_DIR: path.join(dir, 'data'),
      OMNIROUTE_HOST: '127.0.0.1',
      OMNIROUTE_PORT: String(port),
      ...env,
    });
    try {
      return await runGateway(full);
    } catch (err) {
      if (attempt >= 3 || env.OMNIROUTE_PORT || !/address already in use/i.test(String(err?.message))) throw err;
    }
  }
}

/** Starts the headless gateway with exactly `env` (a restart: pass the `env` startGateway resolved with). */
export async function runGateway(env) {
  const { child, match } = await startProcess('omniroute', GATEWAY_BIN, ['--headless'], env, (lines) => {
    const key = lines.map((l) => l.match(/^\s*API key:\s+(sk-omni-\S+)/)).find(Boolean);
    const dash = lines.map((l) => l.match(/^\s*Dashboard:\s+(http:\/\/\S+#token=(\S+))/)).find(Boolean);
    return key && dash ? { key: key[1], link: dash[1], token: decodeURIComponent(dash[2]) } : null;
  });
  return { child, base: `http://127.0.0.1:${env.OMNIROUTE_PORT}`, env, ...match };
}

/** Starts the fake upstream (tests/cmd/fakeupstream, built into `dir` unless FAKEUPSTREAM_BIN names one); resolves with its base URL. */
export async function startFakeUpstream(dir) {
  let bin = process.env.FAKEUPSTREAM_BIN ? path.resolve(FRONTEND, process.env.FAKEUPSTREAM_BIN) : '';
  if (!bin) {
    bin = path.join(dir, 'fakeupstream');
    execFileSync('go', ['build', '-o', bin, './tests/cmd/fakeupstream'], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
  }
  const { child, match } = await startProcess('fakeupstream', bin, ['-addr', '127.0.0.1:0'], process.env, (lines) => lines[0]?.match(/listening on (http:\/\/\S+)/));
  return { child, base: match[1] };
}

/** Debian's Chromium, headless; closed when the spec ends. */
export async function launchChromium(args = CHROMIUM_ARGS) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args });
  browsers.add(browser);
  return browser;
}

/** The management API as `token` at `base`: (method, path, body?) → { status, body }. */
export function management(base, token) {
  return async (method, p, body) => {
    const res = await fetch(base + p, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  };
}

/** A full-page screenshot into ARTIFACTS. */
export async function snap(page, name) {
  if (!page) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/**
 * Tests that share state: once one fails (screenshot of `page()` as
 * FAILED-<prefix>-<name>), the later ones skip rather than fail on its debris.
 */
export function stepper(prefix, page) {
  let broken = null;
  return (name, fn) =>
    test(name, async (t) => {
      if (broken) {
        t.skip(`skipped: "${broken}" failed first`);
        return;
      }
      try {
        await fn(t);
      } catch (err) {
        broken = name;
        await snap(page(), `FAILED-${prefix}-${name.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => {});
        throw err;
      }
    });
}

/** Elements whose content sticks out sideways (scrollWidth > clientWidth), the page included. */
export function overflowing(page) {
  return page.evaluate(() => {
    const out = [];
    const doc = document.scrollingElement;
    if (doc.scrollWidth > doc.clientWidth) out.push(`document ${doc.scrollWidth} > ${doc.clientWidth}`);
    for (const el of document.querySelectorAll('body *')) {
      if (el.closest('.visually-hidden, svg, [hidden], dialog:not([open]), .skip-link, thead, datalist')) continue;
      const cs = getComputedStyle(el);
      if (cs.display === 'inline' || cs.display === 'none' || el.clientWidth === 0) continue;
      if (el.scrollWidth > el.clientWidth + 1) {
        const id = el.id ? `#${el.id}` : '';
        const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
        out.push(`${el.tagName.toLowerCase()}${id}${cls} ${el.scrollWidth} > ${el.clientWidth}: ${(el.textContent ?? '').trim().slice(0, 60)}`);
      }
    }
    return out;
  });
}
