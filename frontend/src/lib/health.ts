// Pure mappings from gateway state to what the dashboard shows: overall health
// → header badge, connection state → status badge, breaker state → tone, and
// folding a live `connection` event into a connection row.

export type Tone = 'ok' | 'warn' | 'bad' | 'muted';

export interface BadgeInfo {
  label: string;
  tone: Tone;
  /** One sentence for a title/tooltip or the Overview page. */
  description: string;
}

/** `status` of GET /api/monitoring/health and of `health` events. */
export function healthBadge(status: unknown): BadgeInfo {
  const s = typeof status === 'string' ? status.trim().toLowerCase() : '';
  switch (s) {
    case 'setup':
      return { label: 'Set up', tone: 'muted', description: 'No provider connection yet: add one so the gateway has somewhere to route requests.' };
    case 'healthy':
      return { label: 'Healthy', tone: 'ok', description: 'Every connection can take requests.' };
    case 'degraded':
      return {
        label: 'Degraded',
        tone: 'warn',
        description: 'Requests are served, but something is not: see the list below for what and when it is back.',
      };
    case 'paused':
      return {
        label: 'Paused',
        tone: 'muted',
        description: 'The gateway is paused: clients get 503 GATEWAY_PAUSED until you resume it. Connections keep their own states below.',
      };
    case 'unhealthy':
      return {
        label: 'Unhealthy',
        tone: 'bad',
        description: 'No configured model can be served right now: see the list below for what and when it is back.',
      };
    case '':
      return { label: 'Unknown', tone: 'muted', description: 'The gateway did not report a status.' };
    default:
      return { label: s.charAt(0).toUpperCase() + s.slice(1), tone: 'warn', description: `The gateway reported “${s}”.` };
  }
}

/** Circuit breaker states as the gateway writes them (CLOSED, OPEN, HALF_OPEN, DEGRADED). */
export function breakerBadge(state: unknown): { label: string; tone: Tone } {
  const s = typeof state === 'string' ? state.trim().toUpperCase().replace(/[\s-]/g, '_') : '';
  switch (s) {
    case 'CLOSED':
      return { label: 'Closed', tone: 'ok' };
    case 'DEGRADED':
      return { label: 'Degraded', tone: 'warn' };
    case 'HALF_OPEN':
    case 'HALFOPEN':
      return { label: 'Half-open', tone: 'warn' };
    case 'OPEN':
      return { label: 'Open', tone: 'bad' };
    default:
      return { label: s ? s.toLowerCase().replace(/_/g, ' ') : 'Unknown', tone: 'muted' };
  }
}

export type ConnectionKind = 'disabled' | 'healthy' | 'cooling' | 'banned' | 'expired' | 'credits_exhausted' | 'key_rejected' | 'endpoint_not_found' | 'unavailable';

export interface ConnectionState {
  kind: ConnectionKind;
  label: string;
  tone: Tone;
  /** When cooling: the deadline (the row shows a live countdown to it). */
  until?: Date;
}

/** The fields of a connection row that decide its status. */
export interface ConnectionLike {
  isActive?: boolean | null;
  testStatus?: string | null;
  rateLimitedUntil?: string | number | null;
}

const TERMINAL: Record<string, { kind: ConnectionKind; label: string }> = {
  banned: { kind: 'banned', label: 'Banned' },
  expired: { kind: 'expired', label: 'Expired' },
  credits_exhausted: { kind: 'credits_exhausted', label: 'Credits exhausted' },
  // The provider rejected the key (401/403 to the credential check): never "expired".
  key_rejected: { kind: 'key_rejected', label: 'Key rejected' },
  // The base URL answered 404 to the credential check: edit the base URL.
  endpoint_not_found: { kind: 'endpoint_not_found', label: 'Wrong base URL' },
};

export function isTerminalStatus(testStatus: string | null | undefined): boolean {
  return Boolean(testStatus && TERMINAL[testStatus.toLowerCase()]);
}

function toTime(v: string | number | null | undefined): number | null {
  if (v == null || v === '') return null;
  const t = typeof v === 'number' ? v : Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/**
 * Mirrors the gateway's eligibility rule: a terminal state (banned, expired,
 * credits exhausted) wins; otherwise a deadline in the future is a cooldown;
 * a deadline in the past has lapsed (the gateway recovers lazily, so testStatus
 * may still say "unavailable"). Disabled connections say so first.
 */
export function connectionState(c: ConnectionLike, now = Date.now()): ConnectionState {
  const status = (c.testStatus ?? '').trim().toLowerCase();
  const terminal = TERMINAL[status];
  if (c.isActive === false) return { kind: 'disabled', label: 'Disabled', tone: 'muted' };
  if (terminal) return { ...terminal, tone: 'bad' };
  const until = toTime(c.rateLimitedUntil);
  if (until != null && until > now) return { kind: 'cooling', label: 'Cooling down', tone: 'warn', until: new Date(until) };
  return { kind: 'healthy', label: 'Healthy', tone: 'ok' };
}

/** The `data` of a live `connection` event. */
export interface ConnectionEventData {
  id: string;
  provider?: string;
  name?: string;
  status?: 'healthy' | 'cooling_down' | 'terminal' | string;
  rateLimitedUntil?: string | null;
  cooldownRemainingMs?: number;
  backoffLevel?: number;
  lastErrorType?: string;
  errorCode?: string;
  terminal?: string;
}

/**
 * Folds a live `connection` event into a connection row (returns a new object).
 * The event carries the new cooldown state; testStatus is derived the way the
 * gateway stores it ("active", "unavailable" or the terminal name).
 */
export function applyConnectionEvent<T extends ConnectionLike & Record<string, unknown>>(conn: T, ev: ConnectionEventData): T {
  const next: Record<string, unknown> = { ...conn };
  next['rateLimitedUntil'] = ev.rateLimitedUntil ?? null;
  if (typeof ev.backoffLevel === 'number') next['backoffLevel'] = ev.backoffLevel;
  if (ev.lastErrorType !== undefined) next['lastErrorType'] = ev.lastErrorType;
  if (ev.errorCode !== undefined) next['errorCode'] = ev.errorCode;
  if (ev.terminal) next['testStatus'] = ev.terminal;
  else if (ev.status === 'cooling_down') next['testStatus'] = 'unavailable';
  else if (ev.status === 'healthy') next['testStatus'] = 'active';
  return next as T;
}

/**
 * Provider health keys are breaker keys: a catalogue provider ("openai") or, for
 * a user-defined endpoint, "<provider>:<connectionId>". Shows the connection's
 * name when it is known.
 */
export function providerLabel(key: string, names: ReadonlyMap<string, string>): string {
  const i = key.indexOf(':');
  if (i < 0) return key;
  const name = names.get(key.slice(i + 1));
  return name ? `${name} (${key.slice(0, i)})` : key;
}
