import { afterEach, describe, expect, it, vi } from 'vitest';
import { setSession } from '../../src/api';
import { renderConnections } from '../../src/views/connections';

// A refusal that names a field reads the same under that field in the Add
// form and in the Edit dialog: the field's words, never the code; the code is
// shown once, in the form's error box, the same way in both.

const REFUSAL = {
  error: { message: 'Base URL must be an http(s) URL', type: 'invalid_request_error', code: 'INVALID_BASE_URL', param: 'baseUrl' },
};
const CONN = { id: 'c1', provider: 'openai-compatible', name: 'Fake', authType: 'apikey', isActive: true, baseUrl: 'https://one.example.com/v1' };

/** Waits for the element `selector` finds in `within`. */
const found = <T extends Element>(within: ParentNode, selector: string) =>
  vi.waitFor(() => {
    const el = within.querySelector<T>(selector);
    if (!el) throw new Error(`no ${selector} yet`);
    return el;
  });

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

function render(params: string) {
  setSession({ kind: 'user', name: 'someone@example.com', role: 'admin' });
  vi.stubGlobal(
    'fetch',
    vi.fn(async (path: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      if (method === 'POST' && path === '/api/providers') return json(REFUSAL, 400);
      if (method === 'PUT' && path === '/api/providers/c1') return json(REFUSAL, 400);
      if (path === '/api/providers') return json({ connections: [CONN] });
      return json({});
    }),
  );
  const root = document.createElement('div');
  document.body.appendChild(root);
  const ac = new AbortController();
  const stop = renderConnections(root, { signal: ac.signal, params: new URLSearchParams(params) });
  return { root, done: () => (ac.abort(), stop(), root.remove(), document.querySelectorAll('dialog').forEach((d) => d.remove())) };
}

/** What the form shows after the refusal: the Base URL field's error, and the form's error box. */
function shown(form: HTMLFormElement, baseUrl: HTMLInputElement) {
  return {
    field: baseUrl.closest('.field')!.querySelector('.field-error')!.textContent,
    invalid: baseUrl.getAttribute('aria-invalid'),
    box: form.querySelector('.form-status .alert-message')?.textContent,
    code: form.querySelector('.form-status .alert-code')?.textContent,
  };
}

const expected = { field: 'Base URL must be an http(s) URL', invalid: 'true', box: 'Base URL must be an http(s) URL', code: 'INVALID_BASE_URL' };

describe('a field refusal of a connection form', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('reads the same in the Add form', async () => {
    const page = render('');
    const provider = await found<HTMLInputElement>(page.root, '#conn-provider');
    const form = provider.closest('form')!;
    const baseUrl = form.querySelector<HTMLInputElement>('#conn-baseurl')!;
    provider.value = 'openai-compatible';
    baseUrl.value = 'https://one.example.com/v1';
    form.querySelector<HTMLInputElement>('#conn-apikey')!.value = 'sk-test';
    form.requestSubmit();
    await vi.waitFor(() => expect(shown(form, baseUrl)).toEqual(expected));
    page.done();
  });

  it('reads the same in the Edit dialog', async () => {
    const page = render('edit=c1');
    const baseUrl = await found<HTMLInputElement>(document, 'dialog #edit-baseurl');
    const form = baseUrl.closest('form')!;
    baseUrl.value = 'https://two.example.com/v1';
    form.requestSubmit();
    await vi.waitFor(() => expect(shown(form, baseUrl)).toEqual(expected));
    page.done();
  });
});
