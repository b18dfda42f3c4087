import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSession } from '../../src/api';
import type { CooldownConnection } from '../../src/lib/cooldowns';
import { live } from '../../src/live';
import { renderCooldowns } from '../../src/views/cooldowns';
import { routeTable } from './route-table';

// The Cooldown Manager follows the live view by re-rendering its list; a row
// a person has selected (and the checkbox they are on) must stay the same
// element: replacing it lost their focus, and a Space pressed as it was
// replaced (the browser spec's Cooldown Manager step, two specs at a time).

// A fixed deadline, so a refetch reads the same row as before.
const UNTIL = new Date(Date.now() + 600_000).toISOString();

const conn = (id: string, extra: Partial<CooldownConnection> = {}): CooldownConnection => ({
  id,
  provider: 'openai-compatible',
  name: `Fake ${id.toUpperCase()}`,
  authType: 'apikey',
  status: 'cooling_down',
  testStatus: 'active',
  cooldownRemainingMs: 0,
  rateLimitedUntil: UNTIL,
  backoffLevel: 1,
  lastErrorType: 'rate_limit',
  lastError: 'slow down',
  lastErrorAt: '2026-12-07T01:00:00Z',
  lockouts: [],
  ...extra,
});

/** Renders the page with GET /api/resilience/cooldowns answering `answer()`; counts those requests. */
async function render(answer: () => CooldownConnection[]) {
  setSession({ kind: 'user', name: 'someone@example.com', role: 'admin' });
  let lists = 0;
  vi.stubGlobal(
    'fetch',
    vi.fn(async (path: string) => {
      const body = String(path).startsWith('/api/resilience/cooldowns') ? (lists++, { connections: answer() }) : {};
      return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
    }),
  );
  const root = document.createElement('div');
  document.body.appendChild(root);
  const ac = new AbortController();
  const stop = renderCooldowns(root, { signal: ac.signal, params: new URLSearchParams() });
  await vi.waitFor(() => expect(root.querySelectorAll('[data-testid="cooldown-row"]').length).toBe(2));
  const refresh = root.querySelector<HTMLButtonElement>('.page-head button')!;
  /** Waits for `n` more list requests than `since`, each answered and shown. */
  const refetched = async (since: number, n: number) => {
    await vi.waitFor(() => expect(lists).toBeGreaterThanOrEqual(since + n), { timeout: 3000 });
    await vi.waitFor(() => expect(refresh.disabled).toBe(false));
  };
  return { root, lists: () => lists, refetched, done: () => (ac.abort(), stop(), root.remove()) };
}

const connectionEvent = (id: string, backoffLevel: number) =>
  live.dispatch({ id: 1, type: 'connection', at: new Date().toISOString(), data: { id, rateLimitedUntil: UNTIL, backoffLevel } } as never);

afterEach(() => vi.unstubAllGlobals());

describe('the Cooldown Manager’s live list', () => {
  it('keeps a selected, focused checkbox (the same element) through live updates and refetches', async () => {
    let backoffB = 1;
    const page = await render(() => [conn('a'), conn('b', { backoffLevel: backoffB })]);
    const { root } = page;
    const box = root.querySelector<HTMLInputElement>('input[data-select="b"]')!;
    const rowA = root.querySelector('tbody[data-id="a"]')!;
    const cellA = rowA.querySelector('th')!;
    box.focus();
    box.click();
    expect(box.checked).toBe(true);

    // Another row changes: B's row is not touched, A's is updated in place.
    connectionEvent('a', 2);
    expect(rowA.textContent).toContain('backoff level 2');
    expect(root.querySelector('input[data-select="b"]')).toBe(box);
    expect(root.querySelector('tbody[data-id="a"]')).toBe(rowA);
    expect(cellA.isConnected).toBe(false); // A's cells follow its data

    // B's own data changes: its cells follow, its checkbox stays.
    connectionEvent('b', 3);
    const rowB = root.querySelector('tbody[data-id="b"]')!;
    expect(rowB.textContent).toContain('backoff level 3');
    expect(root.querySelector('input[data-select="b"]')).toBe(box);

    // Two refetches (each a live event's follow-up): still the same checkbox, checked, focused.
    backoffB = 3;
    const before = page.lists();
    connectionEvent('b', 3);
    await page.refetched(before, 1);
    const cellB = rowB.querySelector('th')!;
    connectionEvent('b', 3);
    await page.refetched(before, 2);
    expect(root.querySelector('input[data-select="b"]')).toBe(box);
    expect(box.isConnected).toBe(true);
    expect(box.checked).toBe(true);
    expect(document.activeElement).toBe(box);
    expect(rowB.querySelector('th')).toBe(cellB); // an unchanged row is left alone
    expect(root.querySelector<HTMLButtonElement>('.toolbar button')!.textContent).toBe('Clear selected (1)');
    page.done();
  });

  it('puts rows in their new order and drops the ones that left, without rebuilding the others', async () => {
    let list = [conn('a'), conn('b'), conn('c', { status: 'healthy', cooldownRemainingMs: 0 })];
    const page = await render(() => list);
    const { root } = page;
    const rowB = root.querySelector('tbody[data-id="b"]')!;
    const cellB = rowB.querySelector('th')!;
    list = [conn('b'), conn('z', { name: 'Fake 0' })];
    const before = page.lists();
    connectionEvent('a', 1);
    await page.refetched(before, 1);
    await vi.waitFor(() => expect([...root.querySelectorAll('tbody')].map((t) => t.getAttribute('data-id'))).toEqual(['z', 'b']));
    expect(root.querySelector('tbody[data-id="b"]')).toBe(rowB);
    expect(rowB.querySelector('th')).toBe(cellB);
    page.done();
  });

  it('never offers a viewer an enabled clear while the first list is on its way', async () => {
    setSession({ kind: 'user', name: 'vic@example.com', role: 'viewer', routes: routeTable() });
    // The list never answers: the page shows its first state only.
    vi.stubGlobal('fetch', vi.fn(() => new Promise<Response>(() => {})));
    const root = document.createElement('div');
    document.body.appendChild(root);
    const ac = new AbortController();
    const stop = renderCooldowns(root, { signal: ac.signal, params: new URLSearchParams() });
    const clearAll = [...root.querySelectorAll<HTMLButtonElement>('button')].find((b) => b.textContent === 'Clear all')!;
    expect(clearAll.disabled).toBe(true);
    expect(clearAll.getAttribute('data-denied')).toMatch(/you are a viewer/);
    ac.abort();
    stop();
    root.remove();
  });
});
