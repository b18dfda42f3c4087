import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Connection, ImportSource } from '../../src/api';
import { labelList, reimportButton, renderImportCard } from '../../src/views/subscription-parts';

// The import card and the Re-import button draw their CLIs from GET
// /api/providers/import: a made-up CLI shows that nothing in them names one.
describe('the import card', () => {
  const fetchMock = vi.fn();
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockReset();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status, headers: { 'Content-Type': 'application/json' } });
  const acme: ImportSource = { source: 'acme-cli', label: 'Acme CLI', provider: 'acme', defaultPath: '~/.acme/login.json' };
  const zed: ImportSource = { source: 'zed-cli', label: 'Zed CLI', provider: 'zed', defaultPath: '~/.zed/auth.json' };

  it('offers the gateway’s import sources, with their default file, and imports the one chosen', async () => {
    fetchMock.mockResolvedValue(json({ connection: { id: 'c1', name: 'Zed CLI (z@x)', provider: 'zed' }, created: true }, 201));
    const ctl = new AbortController();
    const imported = vi.fn(async () => {});
    const card = renderImportCard(ctl.signal, Promise.resolve([acme, zed]), imported);
    const select = card.querySelector<HTMLSelectElement>('#import-source')!;
    const path = card.querySelector<HTMLInputElement>('#import-path')!;
    await vi.waitFor(() => expect(select.options).toHaveLength(2));
    expect([...select.options].map((o) => [o.value, o.textContent])).toEqual([['acme-cli', 'Acme CLI'], ['zed-cli', 'Zed CLI']]);
    expect(select.disabled).toBe(false);
    expect(path.placeholder).toBe('~/.acme/login.json');
    expect(card.textContent).toContain('Acme CLI and Zed CLI keep their sign-in');
    select.value = 'zed-cli';
    select.dispatchEvent(new Event('change'));
    expect(path.placeholder).toBe('~/.zed/auth.json');
    card.dispatchEvent(new Event('submit', { cancelable: true }));
    await vi.waitFor(() => expect(imported).toHaveBeenCalled());
    expect(fetchMock.mock.calls[0]![0]).toBe('/api/providers/import');
    expect(JSON.parse(String(fetchMock.mock.calls[0]![1]?.body))).toEqual({ source: 'zed-cli' });
    ctl.abort();
  });

  it('says so and offers nothing when the gateway reads no CLI login', async () => {
    const card = renderImportCard(new AbortController().signal, Promise.resolve([]), async () => {});
    await vi.waitFor(() => expect(card.textContent).toContain('This gateway reads no CLI login.'));
    expect(card.querySelector<HTMLSelectElement>('#import-source')!.disabled).toBe(true);
    expect(card.querySelector<HTMLButtonElement>('[data-testid="import-login"]')!.disabled).toBe(true);
  });

  it('offers Re-import only for an expired login of an import source', () => {
    const expired = (from: string) => ({ id: 'c1', name: 'x', provider: 'p', authType: 'oauth', testStatus: 'expired', providerSpecificData: { importedFrom: from } }) as unknown as Connection;
    expect(reimportButton(expired('acme-cli'), [acme], async () => {})).not.toBeNull();
    // A provider's own sign-in (not a CLI's file) is renewed with its sign-in card.
    expect(reimportButton(expired('acme-signin'), [acme], async () => {})).toBeNull();
    expect(reimportButton({ ...expired('acme-cli'), testStatus: 'active' } as Connection, [acme], async () => {})).toBeNull();
  });

  it('names the CLIs for a sentence', () => {
    expect(labelList([])).toBe('');
    expect(labelList(['A'])).toBe('A');
    expect(labelList(['A', 'B', 'C'])).toBe('A, B and C');
  });
});
