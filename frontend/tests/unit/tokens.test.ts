import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, setSession, type ManagementToken } from '../../src/api';
import { creatorText, revokeMessage, roleChoices, roleLabel, toTokenRow, tokenAccess } from '../../src/lib/tokens';
import { setWords } from '../../src/lib/words';
import { plainErrorBox, renderTokens } from '../../src/views/tokens';

const token = (extra: Partial<ManagementToken> = {}): ManagementToken => ({
  id: 't1',
  name: 'ci-deploy',
  role: 'operator',
  tokenMasked: 'omt_ab12…',
  createdBy: 'ada@example.com',
  createdAt: '2026-12-01T10:00:00Z',
  lastUsedAt: null,
  ...extra,
});

describe('who may do what on the Tokens page', () => {
  it('lets only an admin list, create and revoke, and says why to the others', () => {
    expect(tokenAccess('admin')).toEqual({ list: true, manage: true, reason: '' });
    for (const role of ['operator', 'viewer', undefined, 'bogus']) {
      const a = tokenAccess(role);
      expect(a.list, String(role)).toBe(false);
      expect(a.manage, String(role)).toBe(false);
      expect(a.reason).toMatch(/Only an admin can see, create or revoke/);
    }
    expect(tokenAccess('viewer').reason).toContain('Your role is Viewer.');
    expect(tokenAccess('operator').reason).toContain('Your role is Operator.');
  });

  it('offers no role above the creator’s', () => {
    expect(roleChoices('admin')).toEqual(['viewer', 'operator', 'admin']);
    expect(roleChoices('operator')).toEqual(['viewer', 'operator']);
    expect(roleChoices('viewer')).toEqual(['viewer']);
    expect(roleChoices(undefined)).toEqual([]);
  });
});

describe('a token row', () => {
  it('keeps the masked prefix only, never a value', () => {
    const leaky = { ...token(), token: 'omt_SECRET_VALUE', tokenHash: 'f'.repeat(64), tokenMasked: 'omt_ab12…' + 'x'.repeat(40) } as ManagementToken;
    const row = toTokenRow(leaky);
    expect(JSON.stringify(row)).not.toMatch(/SECRET_VALUE|ffff|xxxxxxxx/);
    expect(row).toMatchObject({ name: 'ci-deploy', role: 'operator', roleLabel: 'Operator', creator: 'ada@example.com', lastUsedAt: null, instance: false });
  });

  it('names the creator in plain words', () => {
    expect(creatorText({ id: 'x', createdBy: 'management token' })).toBe('the management token');
    expect(creatorText({ id: 'x', createdBy: 'token:robot' })).toBe('the token “robot”');
    expect(creatorText({ id: 'instance:a:1', createdBy: 'instance' })).toMatch(/instance itself/);
    expect(creatorText({ id: 'x', createdBy: '' })).toBe('unknown');
    expect(roleLabel('viewer')).toBe('Viewer');
    expect(roleLabel('new')).toBe('new');
  });

  it('warns differently before revoking an instance’s own token', () => {
    expect(revokeMessage({ name: 'ci', instance: false })).toMatch(/refuses it from its next request/);
    expect(revokeMessage({ name: 'instance a', instance: true })).toMatch(/until it starts again/);
  });
});

/** Renders the page with GET /api/tokens answering `tokens`; returns the root and the requests made. */
async function render(role: string | null, tokens: ManagementToken[]) {
  setSession(role ? { kind: 'user', name: 'someone@example.com', role } : null);
  const calls: string[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (path: string, init: RequestInit) => {
      calls.push(`${init.method} ${path}`);
      return new Response(JSON.stringify({ tokens }), { status: 200, headers: { 'Content-Type': 'application/json' } });
    }),
  );
  const root = document.createElement('div');
  document.body.appendChild(root);
  renderTokens(root, { signal: new AbortController().signal, params: new URLSearchParams() });
  await vi.waitFor(() => expect(root.querySelector('.loading')).toBeNull());
  return { root, calls };
}

describe('the Tokens page', () => {
  afterEach(() => {
    setSession(null);
    setWords(null);
    vi.unstubAllGlobals();
    document.body.replaceChildren();
  });

  it('shows an admin the list with revoke buttons and the create form, roles up to admin', async () => {
    const { root, calls } = await render('admin', [token(), token({ id: 'instance:a', name: 'instance a', createdBy: 'instance', role: 'admin', tokenMasked: 'abcd…', lastUsedAt: '2026-12-02T10:00:00Z' })]);
    expect(calls).toEqual(['GET /api/tokens']);
    const rows = root.querySelectorAll('tbody tr');
    expect(rows).toHaveLength(2);
    expect(rows[0]!.textContent).toContain('ci-deploy');
    expect(rows[0]!.textContent).toContain('omt_ab12…');
    expect(rows[0]!.textContent).toContain('Operator');
    expect(rows[0]!.textContent).toContain('ada@example.com');
    expect(rows[0]!.textContent).toContain('never');
    expect(rows[1]!.textContent).toMatch(/instance itself/);
    expect(root.querySelectorAll('button[aria-label^="Revoke token"]')).toHaveLength(2);
    const options = [...root.querySelectorAll<HTMLOptionElement>('#token-role option')].map((o) => o.value);
    expect(options).toEqual(['viewer', 'operator', 'admin']);
    expect(root.querySelector('button[type=submit]')?.textContent).toBe('Create token');
  });

  it('shows the instance’s management token (no session) as an admin', async () => {
    const { root } = await render(null, []);
    expect(root.textContent).toContain('No tokens yet');
    expect(root.querySelector('#token-name')).not.toBeNull();
  });

  it('shows a viewer the reason, no list request, no create or revoke button', async () => {
    for (const role of ['viewer', 'operator']) {
      const { root, calls } = await render(role, [token()]);
      expect(calls).toEqual([]);
      expect(root.querySelector('[data-testid=tokens-forbidden]')?.textContent).toMatch(/Only an admin/);
      expect(root.querySelectorAll('button')).toHaveLength(0);
      expect(root.querySelector('form')).toBeNull();
      document.body.replaceChildren();
    }
  });

  it('leads an error with the catalogue’s plain words, the code beside it', () => {
    setWords({ codes: { ROLE_FORBIDDEN: 'Your role may not do this: ask an admin.' }, states: {}, fixes: {} });
    const box = plainErrorBox(new ApiError(403, 'role operator may not …', 'ROLE_FORBIDDEN', 'permission_error'));
    expect(box.querySelector('.alert-message')?.textContent).toBe('Your role may not do this: ask an admin.');
    expect(box.querySelector('.alert-code')?.textContent).toBe('ROLE_FORBIDDEN');
    const unknown = plainErrorBox(new ApiError(400, 'something odd', 'NEW_CODE', 'invalid_request_error'));
    expect(unknown.querySelector('.alert-message')?.textContent).toBe('something odd');
  });
});
