import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSession } from '../../src/api';
import { renderModelCooldowns } from '../../src/views/model-cooldowns';
import { routeTable } from './route-table';

// Model Cooldowns' "Reactivate all" starts as the role and the list allow:
// it was enabled (for a viewer too) until the first list arrived.

/** The page's first state, its list never answering. */
function firstState(role: 'viewer' | 'admin') {
  setSession({ kind: 'user', name: 'someone@example.com', role, routes: routeTable() });
  vi.stubGlobal('fetch', vi.fn(() => new Promise<Response>(() => {})));
  const root = document.createElement('div');
  document.body.appendChild(root);
  const ac = new AbortController();
  const stop = renderModelCooldowns(root, { signal: ac.signal, params: new URLSearchParams() });
  const reactivateAll = [...root.querySelectorAll<HTMLButtonElement>('button')].find((b) => b.textContent === 'Reactivate all')!;
  return { reactivateAll, done: () => (ac.abort(), stop(), root.remove()) };
}

describe('Model Cooldowns while the first list is on its way', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('never offers a viewer an enabled Reactivate all, and says why', () => {
    const page = firstState('viewer');
    expect(page.reactivateAll.disabled).toBe(true);
    expect(page.reactivateAll.getAttribute('data-denied')).toMatch(/you are a viewer/);
    page.done();
  });

  it('offers an admin nothing to reactivate yet, without a denial', () => {
    const page = firstState('admin');
    expect(page.reactivateAll.disabled).toBe(true);
    expect(page.reactivateAll.hasAttribute('data-denied')).toBe(false);
    page.done();
  });
});
