import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loginSlug, renderLoginCards } from '../../src/views/login-flow';

// The login panel is driven by GET /api/providers/login: a made-up provider
// shows that nothing in it names one.
describe('renderLoginCards', () => {
  const fetchMock = vi.fn();
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockReset();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status, headers: { 'Content-Type': 'application/json' } });

  it('renders one card per device sign-in, named from the API, and starts the flow of its provider', async () => {
    fetchMock.mockImplementation(async (url: string) => {
      if (url === '/api/providers/login') {
        return json({ providers: [
          { id: 'acme-cloud', name: 'Acme Cloud', kind: 'device', command: 'acme', site: 'Acme', hint: 'Uses your Acme seat.' },
          { id: 'other', name: 'Other', kind: 'redirect', command: 'other', site: 'Other', hint: '' },
        ] });
      }
      return json({ flowId: 'f1', userCode: 'ABCD-1234', verificationUri: 'javascript:alert(1)', expiresAt: '2026-01-01T00:00:00Z', interval: 5 }, 201);
    });
    const ctl = new AbortController();
    const area = renderLoginCards(ctl.signal, async () => {});
    await vi.waitFor(() => expect(area.querySelector('[data-testid="acme-card"]')).not.toBeNull());
    expect(area.querySelectorAll('section.card')).toHaveLength(1);
    const card = area.querySelector('[data-testid="acme-card"]')!;
    expect(card.querySelector('h2')!.textContent).toBe('Sign in to Acme Cloud');
    expect(card.textContent).toContain('Uses your Acme seat.');
    const start = card.querySelector<HTMLButtonElement>('[data-testid="acme-start"]')!;
    expect(start.textContent).toBe('Sign in with Acme');
    start.click();
    await vi.waitFor(() => expect(card.querySelector('[data-testid="acme-code"]')).not.toBeNull());
    expect(fetchMock.mock.calls[1]![0]).toBe('/api/providers/login/acme-cloud');
    expect(fetchMock.mock.calls[1]![1]?.method).toBe('POST');
    expect(card.querySelector('[data-testid="acme-code"]')!.textContent).toBe('ABCD-1234');
    // A verification page that is not a web URL is shown, never linked.
    expect(card.querySelector('[data-testid="acme-uri"]')!.tagName).toBe('CODE');
    ctl.abort();
  });

  it('keeps a panel name to letters, digits and dashes', () => {
    expect(loginSlug({ command: 'Acme Cloud!', id: 'x' })).toBe('acme-cloud-');
    expect(loginSlug({ command: '', id: 'acme' })).toBe('acme');
  });
});
