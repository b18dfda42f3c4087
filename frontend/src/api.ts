// Management API client: relative URLs only (the same bundle runs in a browser
// at /dashboard/ and inside the Wails desktop window), bearer-token auth, and
// the gateway's error envelope {"error":{"message","type","code","param"?}}.

const TOKEN_KEY = 'omniroute.token';

// ---------------------------------------------------------------- token store

let memoryToken: string | null = null;

export function getToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY) ?? memoryToken;
  } catch {
    return memoryToken; // storage disabled: keep it for this page only
  }
}

export function setToken(token: string): void {
  const clean = normalizeToken(token);
  memoryToken = clean;
  try {
    localStorage.setItem(TOKEN_KEY, clean);
  } catch {
    /* memory only */
  }
}

export function clearToken(): void {
  memoryToken = null;
  try {
    localStorage.removeItem(TOKEN_KEY);
  } catch {
    /* nothing stored */
  }
}

export function normalizeToken(raw: string): string {
  return raw.trim().replace(/^Bearer\s+/i, '');
}

/**
 * Takes a `token=` parameter out of the URL fragment (the gateway prints
 * `/dashboard/#token=<token>`), stores it and rewrites the URL without it so
 * the token does not stay in the address bar or history. Whatever route was
 * in the fragment (e.g. `#/keys?token=…`) is kept.
 */
export function captureTokenFromHash(): boolean {
  const hash = location.hash.replace(/^#/, '');
  // "#token=abc" or "#/keys?token=abc&x=1": a route part, then parameters.
  let route = '';
  let query = hash;
  if (hash.startsWith('/')) {
    const q = hash.search(/[?&]/);
    route = q >= 0 ? hash.slice(0, q) : hash;
    query = q >= 0 ? hash.slice(q + 1) : '';
  }
  const parts = query ? query.split('&') : [];
  const tokenPart = parts.find((p) => p.startsWith('token='));
  if (tokenPart === undefined) return false;

  // decodeURIComponent, not URLSearchParams: a '+' in a token is a '+'.
  let token = tokenPart.slice('token='.length);
  try {
    token = decodeURIComponent(token);
  } catch {
    /* keep it as it is */
  }
  const rest = parts.filter((p) => p !== tokenPart && p !== '').join('&');
  const newHash = route ? `#${route}${rest ? `?${rest}` : ''}` : rest ? `#${rest}` : '';
  history.replaceState(history.state, '', `${location.pathname}${location.search}${newHash}`);

  if (!normalizeToken(token)) return false;
  setToken(token);
  return true;
}

// ---------------------------------------------------------------- errors

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly type: string;
  readonly param: string | undefined;

  constructor(status: number, message: string, code: string, type: string, param?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.type = type;
    this.param = param;
  }
}

export function isAbortError(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError';
}

/** Turns anything thrown into something to show: a message and a small code. */
export function describeError(err: unknown): { message: string; code: string } {
  if (err instanceof ApiError) return { message: err.message, code: err.code || err.type || `http_${err.status}` };
  if (err instanceof Error) return { message: err.message, code: 'client_error' };
  return { message: String(err), code: 'client_error' };
}

// ---------------------------------------------------------------- requests

type UnauthorizedHandler = (err: ApiError) => void;
let onUnauthorized: UnauthorizedHandler = () => {};

/** Called once when a request made with the current token gets a 401. */
export function setUnauthorizedHandler(fn: UnauthorizedHandler): void {
  onUnauthorized = fn;
}

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
}

export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const token = getToken();
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers['Authorization'] = `Bearer ${token}`;
  const init: RequestInit = { method, headers, cache: 'no-store', credentials: 'same-origin' };
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  if (opts.signal) init.signal = opts.signal;

  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (err) {
    if (isAbortError(err)) throw err;
    throw new ApiError(0, 'Cannot reach the OmniRoute gateway. Is it running?', 'network_error', 'network_error');
  }

  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
  }

  if (!res.ok) {
    const env = (data as { error?: { message?: unknown; type?: unknown; code?: unknown; param?: unknown } } | undefined)
      ?.error;
    const message =
      typeof env?.message === 'string' && env.message
        ? env.message
        : `Request failed: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
    const code = env?.code != null && env.code !== '' ? String(env.code) : `http_${res.status}`;
    const type = typeof env?.type === 'string' ? env.type : '';
    const param = typeof env?.param === 'string' ? env.param : undefined;
    const err = new ApiError(res.status, message, code, type, param);
    // Only a rejection of the token we actually sent signs out; a stale
    // request from before a sign-in must not throw away the new token.
    if (res.status === 401 && token && getToken() === token) onUnauthorized(err);
    throw err;
  }
  if (text && data === undefined) {
    throw new ApiError(res.status, 'The gateway sent a response that is not JSON.', 'bad_response', 'client_error');
  }
  return data as T;
}

export const api = {
  get: <T>(path: string, signal?: AbortSignal) => request<T>('GET', path, signal ? { signal } : {}),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, { body: body ?? {} }),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, { body }),
  del: <T>(path: string) => request<T>('DELETE', path),
};

// ---------------------------------------------------------------- types

export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface Health {
  status: HealthStatus | string;
  [key: string]: unknown;
}

export interface Connection {
  id: string;
  provider: string;
  name: string;
  authType?: string;
  baseUrl?: string | null;
  prefix?: string | null;
  priority?: number | null;
  isActive: boolean;
  maxConcurrent?: number | null;
  testStatus?: string | null;
  rateLimitedUntil?: string | number | null;
  backoffLevel?: number | null;
  lastError?: string | null;
  lastErrorType?: string | null;
  errorCode?: string | number | null;
  apiKeyMasked?: string | null;
  models?: unknown[] | null;
  createdAt?: string | number | null;
}

export interface NewConnection {
  provider: string;
  name: string;
  authType: 'apikey';
  apiKey?: string;
  baseUrl?: string;
  prefix?: string;
  priority?: number;
}

export interface TestResult {
  ok: boolean;
  latencyMs?: number;
  error?: string | { message?: string; code?: string };
}

export interface ApiKey {
  id: string;
  name: string;
  keyMasked?: string | null;
  scopes?: string[] | null;
  isDefault?: boolean;
  createdAt?: string | number | null;
}

export interface CreatedApiKey extends ApiKey {
  key: string;
}

const enc = encodeURIComponent;

export const endpoints = {
  health: (signal?: AbortSignal) => api.get<Health>('/api/monitoring/health', signal),

  listConnections: async (signal?: AbortSignal): Promise<Connection[]> => {
    const data = await api.get<{ connections?: Connection[] }>('/api/providers', signal);
    return Array.isArray(data?.connections) ? data.connections : [];
  },
  createConnection: (body: NewConnection) => api.post<{ connection: Connection }>('/api/providers', body),
  updateConnection: (id: string, patch: Partial<Pick<Connection, 'isActive'>>) =>
    api.put<{ connection?: Connection }>(`/api/providers/${enc(id)}`, patch),
  testConnection: (id: string) => api.post<TestResult>(`/api/providers/${enc(id)}/test`),
  deleteConnection: (id: string) => api.del<unknown>(`/api/providers/${enc(id)}`),

  listKeys: async (signal?: AbortSignal): Promise<ApiKey[]> => {
    const data = await api.get<{ keys?: ApiKey[] }>('/api/keys', signal);
    return Array.isArray(data?.keys) ? data.keys : [];
  },
  createKey: (name: string) => api.post<CreatedApiKey>('/api/keys', { name }),
  deleteKey: (id: string) => api.del<unknown>(`/api/keys/${enc(id)}`),
};
