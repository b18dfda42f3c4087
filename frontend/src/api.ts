// Management API client: relative URLs only (the same bundle runs in a browser
// at /dashboard/ and inside the Wails desktop window), bearer-token auth, and
// the gateway's error envelope {"error":{"message","type","code","param"?}}.

import type { Combo, ComboInput } from './lib/combos';
import type { LiveLimits, ModelCaps } from './lib/concurrency';
import type { ClearResult, CooldownConnection } from './lib/cooldowns';
import type { ExplainAnswer } from './lib/explain';
import type { LeaseList } from './lib/leases';
import type { LockoutItem, LockoutTarget } from './lib/lockouts';
import type { ListedRule, OperatorRule, PreviewAnswer, ProviderRuleFlags } from './lib/rules';
import type { JsonObject } from './lib/resilience-form';
import { parseInstances, type InstanceList } from './lib/instances';
import type { CatalogueEntry, ModelPrice } from './lib/pricing';
import type { CatalogProvider } from './lib/provider-form';

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

// ---------------------------------------------------------------- session

/** Who the dashboard acts as: GET /api/session (a token's or a signed-in user's). */
export interface SessionInfo {
  kind: 'management-token' | 'token' | 'user' | string;
  name: string;
  role: 'admin' | 'operator' | 'viewer' | string;
  userId?: string;
  /** The gateway's route → role table ("POST /api/providers" → "admin"); what the dashboard gates by (src/lib/access.ts). */
  routes?: Record<string, string>;
}

let session: SessionInfo | null = null;

/** The signed-in user's session (its cookie is HttpOnly: JS only knows it worked). */
export function getSession(): SessionInfo | null {
  return session;
}

export function setSession(s: SessionInfo | null): void {
  session = s;
}

/** Signed in: a management token is stored, or a user's session cookie was accepted. */
export function isSignedIn(): boolean {
  return Boolean(getToken()) || session?.kind === 'user';
}

/** What a role may see: viewer < operator < admin. */
export function roleAtLeast(role: string | undefined, need: 'viewer' | 'operator' | 'admin'): boolean {
  const rank: Record<string, number> = { viewer: 1, operator: 2, admin: 3 };
  return (rank[role ?? ''] ?? 0) >= rank[need]!;
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

// The error types live in lib/errors (no imports), so dom.ts can describe an
// error without importing this module (no import circle).
export { ApiError, describeError, isAbortError, parseErrorEnvelope, type ErrorEnvelope } from './lib/errors';
import { ApiError, isAbortError, parseErrorEnvelope } from './lib/errors';

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

/**
 * Sent with every management request: a page of another origin cannot set it
 * (the gateway grants no CORS preflight), so a signed-in browser's change is
 * accepted only from the dashboard itself.
 */
export const CSRF_HEADER = 'X-OmniRoute-CSRF';

export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const token = getToken();
  const headers: Record<string, string> = { Accept: 'application/json', [CSRF_HEADER]: '1' };
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
    const { message, code, type, param } = parseErrorEnvelope(res.status, res.statusText, data);
    const err = new ApiError(res.status, message, code, type, param);
    // Only a rejection of the token we actually sent signs out; a stale
    // request from before a sign-in must not throw away the new token.
    if (res.status === 401 && token && getToken() === token) onUnauthorized(err);
    else if (res.status === 401 && !token && session?.kind === 'user') onUnauthorized(err); // the session ended
    throw err;
  }
  if (text && data === undefined) {
    throw new ApiError(res.status, 'The gateway sent a response that is not JSON.', 'bad_response', 'client_error');
  }
  return data as T;
}

/** A management request whose body or answer is not a JSON document of the usual kind (a file); errors as request's. */
async function rawFetch(method: string, path: string, body: BodyInit, extra: Record<string, string>): Promise<Response> {
  const token = getToken();
  const headers: Record<string, string> = { 'Content-Type': 'application/json', [CSRF_HEADER]: '1', ...extra };
  if (token) headers['Authorization'] = `Bearer ${token}`;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body, cache: 'no-store', credentials: 'same-origin' });
  } catch (err) {
    if (isAbortError(err)) throw err;
    throw new ApiError(0, 'Cannot reach the OmniRoute gateway. Is it running?', 'network_error', 'network_error');
  }
  if (!res.ok) {
    const text = await res.text();
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
    const { message, code, type, param } = parseErrorEnvelope(res.status, res.statusText, data);
    const err = new ApiError(res.status, message, code, type, param);
    if (res.status === 401 && token && getToken() === token) onUnauthorized(err);
    throw err;
  }
  return res;
}

/** One kind of thing a restore adds, changes or removes. */
export interface RestoreItem {
  id: string;
  name?: string;
}
export interface RestoreChange {
  added: RestoreItem[];
  changed: RestoreItem[];
  removed: RestoreItem[];
}
/** POST /api/restore's answer. */
export interface RestoreResult {
  applied: boolean;
  changes: Record<string, RestoreChange>;
  backup: { createdAt: string; schemaVersion: number; appVersion?: string; withLog: boolean };
}

export const api = {
  get: <T>(path: string, signal?: AbortSignal) => request<T>('GET', path, signal ? { signal } : {}),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, { body: body ?? {} }),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, { body }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  del: <T>(path: string, body?: unknown) => request<T>('DELETE', path, body !== undefined ? { body } : {}),
};

// ---------------------------------------------------------------- types

/** GET /api/auth: how to sign in. */
export interface AuthInfo {
  users: boolean;
  sso: boolean;
  team: boolean;
}

/** A person (GET /api/users). */
export interface User {
  id: string;
  email: string;
  name: string;
  role: string;
  hasPassword: boolean;
  sso: boolean;
  createdAt?: string | null;
  lastLoginAt?: string | null;
}

/** A stored, scoped management token (GET /api/tokens): never its value. */
export interface ManagementToken {
  id: string;
  name: string;
  role: string;
  /** The first characters of the value and an ellipsis ("omt_ab12…"). */
  tokenMasked: string;
  /** Who minted it: a user's email, "token:<name>", "management token", or "instance" for an instance's own. */
  createdBy: string;
  createdAt?: string | null;
  lastUsedAt?: string | null;
}

/** POST /api/tokens: the token plus its value, the only time it is shown. */
export interface CreatedManagementToken extends ManagementToken {
  token: string;
}

/** GET /api/audit filters. */
export interface AuditQuery {
  actor?: string;
  action?: string;
  since?: string;
  until?: string;
  before?: number;
  limit?: number;
}

/** One management write. */
export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  actorKind: string;
  role: string;
  remote: string;
  action: string;
  target: string;
  status: number;
  detail?: unknown;
}

export interface AuditPage {
  entries: AuditEntry[];
  nextBefore?: number;
}

export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface CircuitBreakerCounts {
  open?: number;
  halfOpen?: number;
  degraded?: number;
  closed?: number;
  total?: number;
}

export interface ConnectionHealthCounts {
  coolingDown?: number;
  terminal?: number;
  total?: number;
  soonestRetryAfterMs?: number;
}

export interface ProviderHealth {
  state: string;
  failures?: number;
  lastFailure?: string | null;
  retryAfterMs?: number;
}

/** GET /api/monitoring/health; the counts are only there for the management token. */
/** GET/PATCH /api/settings (only the fields the dashboard edits are typed). */
export interface GeneralSettings {
  providerErrorRules?: OperatorRule[];
  featureFlags?: { emergencyFallback?: boolean | null; emergencyFallbackModel?: string };
  [key: string]: unknown;
}

/** GET /api/feature-flags: a live switch and where its value comes from. */
export interface FeatureFlag {
  key: string;
  env: string;
  enabled: boolean;
  source: 'env' | 'settings';
  envDefault: boolean;
  model?: string;
  description: string;
}

export interface Health {
  status: HealthStatus | string;
  setupComplete?: boolean;
  version?: string;
  /** The client endpoint the gateway announces, e.g. http://127.0.0.1:20128/v1. */
  endpoint?: string;
  /** The client API is paused (tray "Pause Gateway"). */
  paused?: boolean;
  uptime?: number;
  circuitBreakers?: CircuitBreakerCounts;
  connectionHealth?: ConnectionHealthCounts;
  providerHealth?: Record<string, ProviderHealth>;
  /** Exclusive session leases held right now. */
  leases?: { active?: number };
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
  /** rateLimitOverrides, e.g. {"maxConcurrent":4,"modelConcurrency":{"glm-5":1}}. */
  rateLimitOverrides?: Record<string, unknown> | null;
  /** Live concurrency gate and request queue state (GET /api/rate-limits has the same fields). */
  live?: LiveLimits | null;
  testStatus?: string | null;
  rateLimitedUntil?: string | number | null;
  backoffLevel?: number | null;
  lastError?: string | null;
  lastErrorType?: string | null;
  lastErrorAt?: string | null;
  errorCode?: string | number | null;
  apiKeyMasked?: string | null;
  models?: unknown[] | null;
  /** What the upstream's GET /models answered (or the catalogue default). */
  discoveredModels?: unknown[] | null;
  /** models ∪ discoveredModels: what the connection serves as bare names. */
  servedModels?: unknown[] | null;
  /** "upstream", "catalog" or "" (never asked). */
  modelsSource?: string | null;
  modelsError?: string | null;
  modelsRefreshedAt?: string | null;
  /** Per served model: whether it finishes a cut answer (honoured, refused, unknown) and how that is known. */
  modelPrefill?: Record<string, { prefill?: string; prefillSource?: string }> | null;
  createdAt?: string | number | null;
  [key: string]: unknown;
}

export interface NewConnection {
  provider: string;
  name: string;
  authType: 'apikey';
  apiKey?: string;
  baseUrl?: string;
  prefix?: string;
  priority?: number;
  maxConcurrent?: number;
  models?: string[];
  /** Provider-specific settings (the provider's dataFields). */
  providerSpecificData?: Record<string, unknown>;
  /** Check the key with the upstream (GET /models and a one-token completion). */
  verify?: boolean;
}

/** One step of a credential check (Test, create, edit). */
export interface CheckStep {
  step: 'reach' | 'auth' | 'models' | 'completion' | string;
  ok: boolean;
  skipped?: boolean;
  status?: number;
  message?: string;
  model?: string;
}

/** A create / edit answer: the connection, its credential check and a warning when the key was rejected. */
export interface ConnectionSaved {
  connection?: Connection;
  check?: { ok: boolean; rejected: boolean; steps: CheckStep[] };
  warning?: string;
}

/** PUT /api/providers/{id}: only the named fields change; apiKey is write-only. */
export interface ConnectionUpdate {
  name?: string;
  baseUrl?: string;
  prefix?: string;
  priority?: number;
  maxConcurrent?: number;
  /** Per exact upstream model id caps; null removes them all. */
  modelConcurrency?: ModelCaps | null;
  models?: string[];
  apiKey?: string;
  isActive?: boolean;
  providerSpecificData?: Record<string, unknown>;
  /** Check the key with the upstream (sent when the key or the base URL changes). */
  verify?: boolean;
}

/** POST /api/providers/import: a CLI login to bring in (path defaults to the CLI's own file). */
export interface ImportRequest {
  /** One of GET /api/providers/import's sources. */
  source: string;
  path?: string;
}

/** GET /api/providers/import: a CLI whose login an import reads (a provider module's import). */
export interface ImportSource {
  source: string;
  /** The CLI's name ("Claude Code"). */
  label: string;
  /** The catalogue id of the provider its connection is. */
  provider: string;
  /** The file read when no path is given ("~/.codex/auth.json"). */
  defaultPath: string;
}

/** GET /api/providers/login: a provider with a sign-in flow, and what its login panel shows. */
export interface LoginProvider {
  id: string;
  name: string;
  /** "device": a code entered on the provider's page (RFC 8628). */
  kind: string;
  /** The word of `omniroute login <command>`; names the panel. */
  command: string;
  /** Where the login is approved ("GitHub"). */
  site: string;
  hint: string;
}

/** POST /api/providers/login/{provider}: a device login to approve on the provider's site. */
export interface DeviceLoginStart {
  flowId: string;
  userCode: string;
  verificationUri: string;
  expiresAt: string;
  interval: number;
}

/** GET /api/providers/login/{provider}/{flowId}: where the device login stands. */
export interface DeviceLoginPoll {
  status: 'pending' | 'complete' | 'expired' | 'denied' | 'failed';
  interval?: number;
  connection?: Connection;
  created?: boolean;
  error?: { code: string; message: string };
}

export interface TestResult {
  ok: boolean;
  latencyMs?: number;
  status?: number;
  error?: string | { message?: string; code?: string };
  /** The models the connection serves after the test's discovery. */
  models?: unknown[];
  /** reach, auth, model list, one completion: each with the upstream's status and message. */
  steps?: CheckStep[];
  rejected?: boolean;
  /** The prefill probe: whether the tested model finishes a cut answer, as now recorded. */
  prefill?: { model?: string; prefill?: string; prefillSource?: string; skipped?: boolean; status?: number; message?: string };
}

/** POST /api/providers/{id}/models/refresh. */
export interface RefreshModelsResult {
  ok: boolean;
  connection?: Connection;
  error?: { code?: string; message?: string; status?: number };
}

/** The model names setup writes for an agent. */
export interface AgentModels {
  model?: string;
  opus?: string;
  sonnet?: string;
  haiku?: string;
  source?: string;
  /** Set when every connection serving the model is unreachable or has its key rejected. */
  warning?: string;
}

/** settings.agentModelMap: Claude Code / Codex default model families → model or combo ("" = automatic). */
export interface AgentModelMap {
  enabled?: boolean;
  opus?: string;
  sonnet?: string;
  haiku?: string;
  codex?: string;
}

export type ClearCooldownsResult = ClearResult;

/** POST /api/resilience/cooldowns: by ids, by provider, or all (terminal connections are always skipped). */
export type ClearCooldownsRequest = { connectionIds: string[] } | { all: true; provider?: string };

/** GET /api/resilience/cooldowns. */
export interface CooldownList {
  connections: CooldownConnection[];
  generatedAt?: string;
}

export interface ReactivateResult {
  ok: boolean;
  removed?: number;
}

export interface ApiKey {
  id: string;
  name: string;
  keyMasked?: string | null;
  scopes?: string[] | null;
  allowedConnections?: string[] | null;
  allowedModels?: string[] | null;
  isDefault?: boolean;
  /** Private keys' requests are never body-captured. */
  private?: boolean;
  createdAt?: string | number | null;
  budget?: KeyBudget | null;
  limits?: KeyLimits | null;
  spend?: KeySpend | null;
  /** The user the key belongs to ('' for none) and their email. */
  ownerUserId?: string;
  owner?: string;
  /** When the key stops working (RFC 3339; null: never), and whether it has (the gateway's clock). */
  expiresAt?: string | null;
  expired?: boolean;
  /** When it was last rotated, and until when its previous secret still works (null: it does not). */
  rotatedAt?: string | null;
  previousValidUntil?: string | null;
}

/** A key's spend cap per period (docs/COST.md): USD and/or tokens. */
export interface KeyBudget {
  usd?: number;
  tokens?: number;
  period: 'day' | 'month' | 'total';
  /** A USD cap that lets models of unknown price through (their answers charge tokens only); otherwise they are refused MODEL_PRICE_UNKNOWN. */
  allowUnpriced?: boolean;
}

/** A key's rate limits per sliding minute. */
export interface KeyLimits {
  rpm?: number;
  tpm?: number;
}

/** What a key spent in its budget's current period (with its requests in flight). */
export interface KeySpend {
  usd: number;
  tokens: number;
  periodStart?: number | null;
  /** The part of usd / tokens the requests in flight hold (their estimates), and how many requests hold it. */
  heldUsd?: number;
  heldTokens?: number;
  inFlight?: number;
}

/** POST /api/keys, PATCH /api/keys/{id}: budget and limits (null removes them). */
export interface KeyMoney {
  budget?: KeyBudget | null;
  limits?: KeyLimits | null;
}

/** PUT /api/keys/{id}: what a key may do and reach (empty lists allow everything). */
export interface KeyAccess {
  scopes: string[];
  allowedConnections: string[];
  allowedModels: string[];
}

export interface CreatedApiKey extends ApiKey {
  key: string;
}

export interface DefaultKey {
  id: string;
  key: string;
}

export interface Agent {
  id: string;
  name: string;
  kind: 'file' | 'manual' | string;
  configPath?: string | null;
  configured?: boolean;
  hasBackup?: boolean;
  /** Set when the agent cannot be pointed at this gateway at all: why. */
  unreachable?: string | null;
}

export interface AgentInstructions {
  env?: Record<string, string> | null;
  steps?: string[] | null;
}

export interface AgentSetupResult {
  agent?: string;
  path?: string | null;
  backupPath?: string | null;
  created?: boolean;
  instructions?: AgentInstructions | null;
  models?: AgentModels | null;
}

/** One step of a request: an upstream attempt, a cooldown wait (verdict "wait") or an exclusion (verdict "excluded", code the reason). */
export interface AttemptLog {
  connectionId?: string;
  provider?: string;
  model?: string;
  status?: number;
  verdict?: string;
  code?: string;
  detail?: string;
  /** When the step began, ms after the request arrived. */
  startMs?: number;
  latencyMs?: number;
  /** For an exclusion: how long it still held. */
  remainingMs?: number;
}

/** Server-side filters of GET /api/logs. */
export interface LogFilter {
  status?: string;
  connectionId?: string;
  model?: string;
  keyId?: string;
  /** Text search over model, provider, code, attempts, connection and key (by id or name). */
  q?: string;
  /** When the request finished: RFC 3339 (from inclusive, to exclusive). */
  from?: string;
  to?: string;
}

/** One page of GET /api/logs with its cursors. */
export interface LogPage {
  logs: RequestLog[];
  /** before= of the next older page. */
  nextBefore?: number;
  /** after= of the next newer page (absent on the newest page). */
  newerAfter?: number;
}

/** One name Configure offers for an agent (GET /api/agents/{id}/choices). */
export interface AgentChoice {
  name: string;
  kind: 'combo' | 'model' | string;
  serving: boolean;
  requests?: number;
  recommended?: boolean;
  why?: string;
}

export interface RequestLog {
  id: number | string;
  requestId: string;
  createdAt?: string | null;
  /** When the request finished: the time Logs shows and is ordered by. */
  finishedAt?: string | null;
  model?: string;
  provider?: string;
  connectionId?: string;
  apiKeyId?: string;
  status: number;
  stream?: boolean;
  attemptCount?: number;
  attempts?: AttemptLog[] | null;
  latencyMs?: number;
  errorCode?: string;
  /** Time spent in the concurrency gate and request queue (latencyMs includes it). */
  queueMs?: number;
  /** latencyMs − queueMs. */
  upstreamMs?: number;
  /** What the request waited for, or the admission code that refused it. */
  queueReason?: string;
  /** Its request and response bodies were captured (GET /api/logs/{requestId}/bodies). */
  hasBodies?: boolean;
  promptTokens?: number;
  completionTokens?: number;
  cachedTokens?: number;
  /** What the answer cost at its connection's prices; null when the price is unknown or nothing was served. */
  costUsd?: number | null;
  /** What a flat-rate connection's answer would have cost at API prices. */
  savedUsd?: number;
}

/** GET/PATCH /api/capture: when bodies are captured and how long they are kept. */
export interface CaptureSettings {
  enabled: boolean;
  /** Capture is on now (enabled and the window not over). */
  active?: boolean;
  until?: string | null;
  keyIds: string[];
  models: string[];
  retentionMinutes: number;
  maxBodyBytes: number;
  maxTotalBytes: number;
}

/** GET /api/logs/{requestId}/bodies: one request's captured bodies, redacted. */
export interface RequestBodies {
  requestId: string;
  clientFormat: string;
  upstreamFormat: string;
  stream: boolean;
  clientRequest: string;
  upstreamRequest: string;
  upstreamResponse: string;
  clientResponse: string;
  bytes: number;
  truncatedBytes: number;
}

/** POST /api/combos and PUT /api/combos/{id}: the combo and sentences to show (e.g. a shadowed model name). */
export interface ComboSaveResult {
  combo: Combo;
  warnings?: string[] | null;
}

/** GET /api/update: the opt-in release check (never downloads anything). */
export interface UpdateStatus {
  enabled: boolean;
  current: string;
  latest?: string;
  available: boolean;
  /** The release page the user is pointed at. */
  url?: string;
  notes?: string;
  checkedAt?: string;
  /** Why the last check found nothing (unreachable, bad signature …). */
  error?: string;
}

/** GET/PATCH /api/resilience: a nested settings document (see lib/resilience-form.ts). */
export type ResilienceSettings = JsonObject;

const enc = encodeURIComponent;

export const endpoints = {
  health: (signal?: AbortSignal) => api.get<Health>('/api/monitoring/health', signal),
  updateStatus: (signal?: AbortSignal) => api.get<UpdateStatus>('/api/update', signal),
  checkUpdate: () => api.post<UpdateStatus>('/api/update/check', {}),

  authInfo: () => api.get<AuthInfo>('/api/auth'),
  login: (email: string, password: string) => api.post<{ user: User }>('/api/login', { email, password }),
  logout: () => api.post<unknown>('/api/logout'),
  session: (signal?: AbortSignal) => api.get<SessionInfo>('/api/session', signal),
  listUsers: async (signal?: AbortSignal): Promise<User[]> => {
    const data = await api.get<{ users?: User[] }>('/api/users', signal);
    return Array.isArray(data?.users) ? data.users : [];
  },
  createUser: (body: { email: string; name?: string; role: string; password?: string }) => api.post<{ user: User }>('/api/users', body),
  updateUser: (id: string, body: { name?: string; role?: string; password?: string }) => api.patch<{ user: User }>(`/api/users/${enc(id)}`, body),
  deleteUser: (id: string) => api.del<unknown>(`/api/users/${enc(id)}`),
  listTokens: async (signal?: AbortSignal): Promise<ManagementToken[]> => {
    const data = await api.get<{ tokens?: ManagementToken[] }>('/api/tokens', signal);
    return Array.isArray(data?.tokens) ? data.tokens : [];
  },
  createToken: (body: { name: string; role: string }) => api.post<CreatedManagementToken>('/api/tokens', body),
  deleteToken: (id: string) => api.del<unknown>(`/api/tokens/${enc(id)}`),
  listAudit: (q: AuditQuery, signal?: AbortSignal) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') p.set(k, String(v));
    const qs = p.toString();
    return api.get<AuditPage>(`/api/audit${qs ? `?${qs}` : ''}`, signal);
  },

  captureSettings: (signal?: AbortSignal) => api.get<CaptureSettings>('/api/capture', signal),
  saveCapture: (body: Partial<CaptureSettings> & { forMinutes?: number; until?: string | null }) => api.patch<CaptureSettings>('/api/capture', body),
  requestBodies: (requestId: string, signal?: AbortSignal) => api.get<RequestBodies>(`/api/logs/${enc(requestId)}/bodies`, signal),
  /** The playground's own key (created on first use); never its secret. */
  playgroundKey: () => api.post<ApiKey>('/api/playground/key'),
  /** One log row by request id (the playground's timeline). */
  logByRequestId: async (requestId: string, signal?: AbortSignal): Promise<RequestLog | null> => {
    const data = await api.get<{ logs?: RequestLog[] }>(`/api/logs?requestId=${enc(requestId)}`, signal);
    return Array.isArray(data?.logs) && data.logs.length ? data.logs[0]! : null;
  },
  setKeyPrivate: (id: string, priv: boolean) => api.patch<ApiKey>(`/api/keys/${enc(id)}`, { private: priv }),
  listConnections: async (signal?: AbortSignal): Promise<Connection[]> => {
    const data = await api.get<{ connections?: Connection[] }>('/api/providers', signal);
    return Array.isArray(data?.connections) ? data.connections : [];
  },
  createConnection: (body: NewConnection) => api.post<ConnectionSaved>('/api/providers', body),
  /** GET /api/providers/catalog: every provider with its connection form's schema (keyField, dataFields). */
  providerCatalog: async (signal?: AbortSignal): Promise<CatalogProvider[]> => {
    const data = await api.get<{ providers?: CatalogProvider[] }>('/api/providers/catalog', signal);
    return Array.isArray(data?.providers) ? data.providers : [];
  },
  /** GET /api/rate-limits: per connection, queue protection and the live gate / queue counters. */
  rateLimits: (signal?: AbortSignal) =>
    api.get<{ connections?: Array<LiveLimits & { connectionId: string }>; autoEnableApiKeyProviders?: boolean }>('/api/rate-limits', signal),
  updateConnection: (id: string, patch: ConnectionUpdate) => api.put<ConnectionSaved>(`/api/providers/${enc(id)}`, patch),
  /** PATCH /api/providers/{id} {pricing}: the connection's own prices (replaces them; {} removes them). */
  setConnectionPricing: (id: string, pricing: Record<string, ModelPrice>) => api.patch<ConnectionSaved>(`/api/providers/${enc(id)}`, { pricing }),
  /** GET /api/pricing: the catalogue (pricing file and shipped prices), the connections' overrides, the file's state. */
  listPricing: (signal?: AbortSignal) => api.get<{ catalogue?: CatalogueEntry[] }>('/api/pricing', signal),
  /** PATCH /api/providers/{id}: replace the hidden models and the aliases. */
  manageModels: (id: string, body: { hiddenModels: string[]; modelAliases: Record<string, string> }) =>
    api.patch<ConnectionSaved>(`/api/providers/${enc(id)}`, body),
  testConnection: (id: string) => api.post<TestResult>(`/api/providers/${enc(id)}/test`),
  refreshModels: (id: string) => api.post<RefreshModelsResult>(`/api/providers/${enc(id)}/models/refresh`, {}),
  importLogin: (body: ImportRequest) => api.post<{ connection: Connection; created: boolean }>('/api/providers/import', body),
  listImports: async (signal?: AbortSignal): Promise<ImportSource[]> => {
    const data = await api.get<{ sources?: ImportSource[] }>('/api/providers/import', signal);
    return Array.isArray(data?.sources) ? data.sources : [];
  },
  listLogins: async (signal?: AbortSignal): Promise<LoginProvider[]> => {
    const data = await api.get<{ providers?: LoginProvider[] }>('/api/providers/login', signal);
    return Array.isArray(data?.providers) ? data.providers : [];
  },
  startLogin: (provider: string) => api.post<DeviceLoginStart>(`/api/providers/login/${enc(provider)}`, {}),
  pollLogin: (provider: string, flowId: string, signal?: AbortSignal) =>
    api.get<DeviceLoginPoll>(`/api/providers/login/${enc(provider)}/${enc(flowId)}`, signal),
  deleteConnection: (id: string) => api.del<unknown>(`/api/providers/${enc(id)}`),
  clearCooldowns: (connectionIds: string[]) => api.post<ClearCooldownsResult>('/api/resilience/cooldowns', { connectionIds }),
  clearCooldownsBy: (body: ClearCooldownsRequest) => api.post<ClearCooldownsResult>('/api/resilience/cooldowns', body),
  listCooldowns: async (provider?: string, signal?: AbortSignal): Promise<CooldownList> => {
    const q = provider ? `?provider=${enc(provider)}` : '';
    const data = await api.get<Partial<CooldownList>>(`/api/resilience/cooldowns${q}`, signal);
    return { connections: Array.isArray(data?.connections) ? data.connections : [], ...(data?.generatedAt ? { generatedAt: data.generatedAt } : {}) };
  },

  listModelCooldowns: async (signal?: AbortSignal): Promise<LockoutItem[]> => {
    const data = await api.get<{ items?: LockoutItem[] }>('/api/resilience/model-cooldowns', signal);
    return Array.isArray(data?.items) ? data.items : [];
  },
  reactivateModel: (t: LockoutTarget) =>
    api.del<ReactivateResult>('/api/resilience/model-cooldowns', { provider: t.provider, connectionId: t.connectionId, model: t.model }),
  reactivateAllModels: () => api.del<ReactivateResult>('/api/resilience/model-cooldowns', { all: true }),

  listKeys: async (signal?: AbortSignal): Promise<ApiKey[]> => {
    const data = await api.get<{ keys?: ApiKey[] }>('/api/keys', signal);
    return Array.isArray(data?.keys) ? data.keys : [];
  },
  createKey: (name: string, money: KeyMoney = {}, ownerUserId?: string, expiresAt?: string) =>
    api.post<CreatedApiKey>('/api/keys', { name, ...money, ...(ownerUserId ? { ownerUserId } : {}), ...(expiresAt ? { expiresAt } : {}) }),
  /** PATCH expiresAt: an RFC 3339 time in the future, or null for never. */
  setKeyExpiry: (id: string, expiresAt: string | null) => api.patch<ApiKey>(`/api/keys/${enc(id)}`, { expiresAt }),
  /** POST /api/keys/{id}/rotate: a new secret (in the answer, once); the old one works for graceMs. */
  rotateKey: (id: string, graceMs: number) => api.post<CreatedApiKey>(`/api/keys/${enc(id)}/rotate`, { graceMs }),
  updateKeyMoney: (id: string, money: KeyMoney) => api.patch<ApiKey>(`/api/keys/${enc(id)}`, money),
  deleteKey: (id: string) => api.del<unknown>(`/api/keys/${enc(id)}`),
  updateKeyAccess: (id: string, access: KeyAccess) => api.put<ApiKey>(`/api/keys/${enc(id)}`, access),
  defaultKey: (signal?: AbortSignal) => api.get<DefaultKey>('/api/keys/default', signal),

  listAgents: async (signal?: AbortSignal): Promise<Agent[]> => {
    const data = await api.get<{ agents?: Agent[] }>('/api/agents', signal);
    return Array.isArray(data?.agents) ? data.agents : [];
  },
  setupAgent: (id: string, model?: string, force = false) =>
    api.post<AgentSetupResult>(`/api/agents/${enc(id)}/setup`, { ...(model ? { model } : {}), ...(force ? { force: true } : {}) }),
  getAgentModelMap: async (signal?: AbortSignal): Promise<AgentModelMap> => {
    const data = await api.get<{ agentModelMap?: AgentModelMap }>('/api/settings', signal);
    return data?.agentModelMap ?? {};
  },
  patchAgentModelMap: async (patch: AgentModelMap): Promise<AgentModelMap> => {
    const data = await api.patch<{ agentModelMap?: AgentModelMap }>('/api/settings', { agentModelMap: patch });
    return data?.agentModelMap ?? {};
  },
  undoAgent: (id: string) => api.post<unknown>(`/api/agents/${enc(id)}/undo`, {}),
  agentInstructions: (id: string, signal?: AbortSignal) => api.get<AgentInstructions>(`/api/agents/${enc(id)}/instructions`, signal),

  getResilience: (signal?: AbortSignal) => api.get<ResilienceSettings>('/api/resilience', signal),
  patchResilience: (patch: ResilienceSettings) => api.patch<ResilienceSettings>('/api/resilience', patch),
  setPaused: (paused: boolean) => api.patch<{ paused: boolean }>('/api/gateway', { paused }),
  resetBreakers: () => api.post<{ ok: boolean; resetCount?: number }>('/api/resilience/reset', {}),
  resetBreaker: (provider: string) => api.post<{ ok: boolean; resetCount?: number }>(`/api/resilience/reset?provider=${enc(provider)}`, {}),

  listCombos: async (signal?: AbortSignal): Promise<Combo[]> => {
    const data = await api.get<{ combos?: Combo[] }>('/api/combos', signal);
    return Array.isArray(data?.combos) ? data.combos : [];
  },
  comboStrategies: async (signal?: AbortSignal): Promise<string[]> => {
    const data = await api.get<{ strategies?: unknown[] }>('/api/combos/strategies', signal);
    return Array.isArray(data?.strategies) ? data.strategies.filter((s): s is string => typeof s === 'string') : [];
  },
  createCombo: (body: ComboInput) => api.post<ComboSaveResult>('/api/combos', body),
  updateCombo: (id: string, body: Partial<ComboInput>) => api.put<ComboSaveResult>(`/api/combos/${enc(id)}`, body),
  deleteCombo: (id: string) => api.del<{ ok: boolean }>(`/api/combos/${enc(id)}`),
  explainRouting: async (model: string, signal?: AbortSignal): Promise<ExplainAnswer> => {
    const data = await api.get<Partial<ExplainAnswer>>(`/api/routing/explain?model=${enc(model)}`, signal);
    return { ...data, model: data?.model ?? model, candidates: Array.isArray(data?.candidates) ? data.candidates : [] };
  },

  /** The team server's instances (GET /api/instances). */
  listInstances: async (signal?: AbortSignal): Promise<InstanceList> => parseInstances(await api.get<unknown>('/api/instances', signal)),

  listLeases: async (signal?: AbortSignal): Promise<LeaseList> => {
    const data = await api.get<Partial<LeaseList>>('/api/resilience/leases', signal);
    return { leases: Array.isArray(data?.leases) ? data.leases : [], ...(data?.generatedAt ? { generatedAt: data.generatedAt } : {}) };
  },
  releaseLease: (id: string) => api.del<{ ok: boolean }>(`/api/resilience/leases/${enc(id)}`),

  listRules: async (signal?: AbortSignal): Promise<{ items: ListedRule[]; providers: ProviderRuleFlags[] }> => {
    const data = await api.get<{ items?: ListedRule[]; providers?: ProviderRuleFlags[] }>('/api/rules', signal);
    return { items: Array.isArray(data?.items) ? data.items : [], providers: Array.isArray(data?.providers) ? data.providers : [] };
  },
  previewRule: (body: { provider: string; status: number; body: string; rules?: OperatorRule[] }) => api.post<PreviewAnswer>('/api/rules/preview', body),
  getSettings: (signal?: AbortSignal) => api.get<GeneralSettings>('/api/settings', signal),
  patchSettings: (patch: Partial<GeneralSettings>) => api.patch<GeneralSettings>('/api/settings', patch),
  featureFlags: async (signal?: AbortSignal): Promise<FeatureFlag[]> => {
    const data = await api.get<{ flags?: FeatureFlag[] }>('/api/feature-flags', signal);
    return Array.isArray(data?.flags) ? data.flags : [];
  },

  /** One page of the request log: from the newest, or older than before, or newer than after. */
  logPage: async (limit: number, signal: AbortSignal | undefined, filter: LogFilter, cursor: { before?: number; after?: number } = {}): Promise<LogPage> => {
    const q = new URLSearchParams({ limit: String(limit) });
    for (const [k, v] of Object.entries(filter)) if (v) q.set(k, v);
    if (cursor.before) q.set('before', String(cursor.before));
    else if (cursor.after) q.set('after', String(cursor.after));
    const data = await api.get<LogPage>(`/api/logs?${q}`, signal);
    return {
      logs: Array.isArray(data?.logs) ? data.logs : [],
      ...(typeof data?.nextBefore === 'number' ? { nextBefore: data.nextBefore } : {}),
      ...(typeof data?.newerAfter === 'number' ? { newerAfter: data.newerAfter } : {}),
    };
  },
  /** The filtered range as a CSV or JSON file's text (GET /api/logs/export). */
  exportLogs: async (format: 'csv' | 'json', filter: LogFilter): Promise<string> => {
    const q = new URLSearchParams({ format });
    for (const [k, v] of Object.entries(filter)) if (v) q.set(k, v);
    const token = getToken();
    const res = await fetch(`/api/logs/export?${q}`, { headers: token ? { Authorization: `Bearer ${token}` } : {}, cache: 'no-store', credentials: 'same-origin' });
    if (!res.ok) throw new ApiError(res.status, `Export failed (${res.status})`, 'export_failed', 'client_error');
    return res.text();
  },
  /** POST /api/backup: the backup file (settings, connections sealed with the passphrase, keys, combos, rules, pricing, budgets). */
  backup: async (passphrase: string, withLog: boolean): Promise<{ blob: Blob; name: string }> => {
    const res = await rawFetch('POST', '/api/backup', JSON.stringify({ passphrase, withLog }), {});
    const cd = res.headers.get('Content-Disposition') ?? '';
    const name = /filename="([^"]+)"/.exec(cd)?.[1] ?? 'omniroute-backup.json';
    return { blob: await res.blob(), name };
  },
  /** POST /api/restore: what restoring the file changes (apply false) or the restore itself (apply true). */
  restore: async (file: Blob, passphrase: string, apply: boolean): Promise<RestoreResult> => {
    const res = await rawFetch('POST', `/api/restore${apply ? '?apply=true' : ''}`, file, { 'X-OmniRoute-Backup-Passphrase': passphrase });
    return (await res.json()) as RestoreResult;
  },
  words: (signal?: AbortSignal) => api.get<import('./lib/words').Words>('/api/words', signal),
  agentChoices: async (id: string, signal?: AbortSignal): Promise<AgentChoice[]> => {
    const data = await api.get<{ choices?: AgentChoice[] }>(`/api/agents/${encodeURIComponent(id)}/choices`, signal);
    return Array.isArray(data?.choices) ? data.choices : [];
  },
  listLogs: async (limit = 100, signal?: AbortSignal, filter: LogFilter = {}): Promise<RequestLog[]> => {
    const q = new URLSearchParams({ limit: String(limit) });
    for (const [k, v] of Object.entries(filter)) if (v) q.set(k, v);
    const data = await api.get<{ logs?: RequestLog[] }>(`/api/logs?${q}`, signal);
    return Array.isArray(data?.logs) ? data.logs : [];
  },
};

