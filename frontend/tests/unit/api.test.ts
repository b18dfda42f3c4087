import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  captureTokenFromHash,
  clearToken,
  CSRF_HEADER,
  describeError,
  endpoints,
  getToken,
  parseErrorEnvelope,
  request,
  setToken,
  setUnauthorizedHandler,
} from '../../src/api';

describe('parseErrorEnvelope', () => {
  it('reads message, code, type and param', () => {
    const body = {
      error: {
        message: 'modelLockout.maxCooldownMs: must be at least baseCooldownMs',
        type: 'invalid_request_error',
        code: 'INVALID_SETTING',
        param: 'modelLockout.maxCooldownMs',
      },
    };
    expect(parseErrorEnvelope(400, 'Bad Request', body)).toEqual({
      message: 'modelLockout.maxCooldownMs: must be at least baseCooldownMs',
      code: 'INVALID_SETTING',
      type: 'invalid_request_error',
      param: 'modelLockout.maxCooldownMs',
    });
  });
  it('falls back to the HTTP status when there is no envelope', () => {
    expect(parseErrorEnvelope(502, 'Bad Gateway', undefined)).toEqual({
      message: 'Request failed: HTTP 502 Bad Gateway',
      code: 'http_502',
      type: '',
      param: undefined,
    });
    expect(parseErrorEnvelope(500, '', { error: 'boom' })).toMatchObject({ message: 'boom', code: 'http_500' });
    expect(parseErrorEnvelope(404, '', { error: { message: '', code: 7 } })).toMatchObject({ message: 'Request failed: HTTP 404', code: '7' });
  });
});

describe('request', () => {
  const fetchMock = vi.fn();
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockReset();
    clearToken();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    setUnauthorizedHandler(() => {});
  });

  it('sends the bearer token and JSON body, relative URL', async () => {
    setToken('Bearer  abc ');
    fetchMock.mockResolvedValue(new Response('{"ok":true,"resetCount":2}', { status: 200 }));
    const res = await endpoints.resetBreakers();
    expect(res).toEqual({ ok: true, resetCount: 2 });
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/resilience/reset');
    expect(init.method).toBe('POST');
    expect(init.headers.Authorization).toBe('Bearer abc');
    expect(init.headers['Content-Type']).toBe('application/json');
    expect(init.headers[CSRF_HEADER]).toBe('1');
    expect(init.body).toBe('{}');
  });

  it('sends the CSRF header with a signed-in session too (no token): the gateway refuses a cookie write without it', async () => {
    fetchMock.mockResolvedValue(new Response('{"users":[]}', { status: 200 }));
    await request('POST', '/api/users', { body: { email: 'a@example.com', role: 'viewer' } });
    const [, init] = fetchMock.mock.calls[0]!;
    expect(init.headers.Authorization).toBeUndefined();
    expect(CSRF_HEADER).toBe('X-OmniRoute-CSRF');
    expect(init.headers[CSRF_HEADER]).toBe('1');
    expect(init.headers['Content-Type']).toBe('application/json');
    expect(init.credentials).toBe('same-origin');
  });

  it('reactivates a model with a JSON DELETE body, and clears cooldowns by provider', async () => {
    setToken('abc');
    fetchMock.mockImplementation(async () => new Response('{"ok":true,"removed":1}', { status: 200 }));
    expect(await endpoints.reactivateModel({ provider: 'openai', connectionId: 'c1', model: 'gpt-4o' })).toEqual({ ok: true, removed: 1 });
    let [url, init] = fetchMock.mock.calls[0]!;
    expect([url, init.method, JSON.parse(init.body)]).toEqual(['/api/resilience/model-cooldowns', 'DELETE', { provider: 'openai', connectionId: 'c1', model: 'gpt-4o' }]);
    await endpoints.reactivateAllModels();
    [, init] = fetchMock.mock.calls[1]!;
    expect(JSON.parse(init.body)).toEqual({ all: true });
    await endpoints.clearCooldownsBy({ all: true, provider: 'openai' });
    [url, init] = fetchMock.mock.calls[2]!;
    expect([url, init.method, JSON.parse(init.body)]).toEqual(['/api/resilience/cooldowns', 'POST', { all: true, provider: 'openai' }]);
    fetchMock.mockImplementation(async () => new Response('{"items":null}', { status: 200 }));
    expect(await endpoints.listModelCooldowns()).toEqual([]);
  });

  it('turns an error envelope into an ApiError with param', async () => {
    fetchMock.mockResolvedValue(
      new Response('{"error":{"code":"INVALID_PREFIX","message":"prefix must be 1-32 lowercase letters","param":"prefix","type":"invalid_request_error"}}', { status: 400 }),
    );
    const err = await request('PUT', '/api/providers/x', { body: { prefix: 'A B' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, code: 'INVALID_PREFIX', param: 'prefix', message: 'prefix must be 1-32 lowercase letters' });
    expect(describeError(err)).toEqual({ message: 'prefix must be 1-32 lowercase letters', code: 'INVALID_PREFIX' });
  });

  it('a 401 for the current token calls the sign-out handler', async () => {
    setToken('stale');
    const seen: string[] = [];
    setUnauthorizedHandler((e) => seen.push(e.code));
    fetchMock.mockResolvedValue(new Response('{"error":{"code":"MANAGEMENT_AUTH_REQUIRED","message":"no","type":"authentication_error"}}', { status: 401 }));
    await expect(endpoints.listAgents()).rejects.toMatchObject({ status: 401 });
    expect(seen).toEqual(['MANAGEMENT_AUTH_REQUIRED']);
  });

  it('network failures and non-JSON answers get clear messages', async () => {
    fetchMock.mockRejectedValueOnce(new TypeError('Failed to fetch'));
    await expect(endpoints.health()).rejects.toMatchObject({ code: 'network_error' });
    fetchMock.mockResolvedValueOnce(new Response('<html>', { status: 200 }));
    await expect(endpoints.health()).rejects.toMatchObject({ code: 'bad_response' });
  });

  it('list endpoints tolerate a missing array', async () => {
    fetchMock.mockResolvedValue(new Response('{}', { status: 200 }));
    expect(await endpoints.listLogs(100)).toEqual([]);
    expect(fetchMock.mock.calls[0]![0]).toBe('/api/logs?limit=100');
  });
});

describe('captureTokenFromHash', () => {
  it('moves the token from the fragment into storage and keeps the route', () => {
    clearToken();
    history.replaceState(null, '', '/dashboard/#/logs?token=a%2Bb&status=error');
    expect(captureTokenFromHash()).toBe(true);
    expect(getToken()).toBe('a+b');
    expect(location.hash).toBe('#/logs?status=error');
  });
});
