// An audit entry as one sentence a person reads: "ana@example.com changed the
// priority of Work OpenAI from 2 to 1", "… deleted the API key CI", "… tried
// to reset the breakers (refused: your role may not do this)". Never a raw
// route, HTTP body or 32-hex id: the target by name (the entry's targetName,
// else the names the page knows), fields in words. Pure; unit-tested in
// tests/unit/audit-words.test.ts.

import { sentence } from './words';

export interface AuditLike {
  actor: string;
  action: string;
  status: number;
  detail?: unknown;
}

interface Detail {
  vars?: Record<string, string>;
  body?: Record<string, unknown>;
  before?: Record<string, unknown>;
  targetName?: string;
  refused?: string;
  event?: string;
  code?: string;
  truncated?: boolean;
  fields?: Record<string, unknown>;
  fieldNames?: string[];
}

/** What each route's object is called. */
const NOUN: Record<string, string> = {
  providers: 'the connection',
  keys: 'the API key',
  combos: 'the combo',
  users: 'the user',
  tokens: 'the management token',
  'resilience/leases': 'the lease',
};

/** Field names in words. */
const FIELD: Record<string, string> = {
  priority: 'priority',
  name: 'name',
  baseUrl: 'base URL',
  isActive: 'switched-on state',
  prefix: 'prefix',
  models: 'models',
  maxConcurrent: 'concurrency limit',
  modelConcurrency: 'per-model concurrency',
  hiddenModels: 'hidden models',
  modelAliases: 'model aliases',
  pricing: 'prices',
  flatRate: 'flat rate',
  role: 'role',
  email: 'email',
  scopes: 'permissions',
  allowedConnections: 'allowed connections',
  allowedModels: 'allowed models',
  budget: 'budget',
  limits: 'rate limits',
  expiresAt: 'expiry',
  ownerUserId: 'owner',
  strategy: 'strategy',
  targets: 'targets',
  description: 'description',
  maxRetriesPerTarget: 'retries per target',
  stickyTtlSeconds: 'sticky time',
  paused: 'pause',
  providerSpecificData: 'provider settings',
  rateLimitOverrides: 'rate-limit overrides',
};

/** The events a backup or restore notes. */
const EVENT: Record<string, string> = {
  'backup made': 'made a backup',
  'backup refused': 'made a backup',
  'restore previewed': 'previewed a restore',
  'restore applied': 'restored a backup',
  'restore refused': 'restored a backup',
};

/** Fields that are part of how the request was sent, not what changed. */
const NOT_CHANGES = new Set(['verify', 'id']);

function parse(d: unknown): Detail {
  if (d && typeof d === 'object') return d as Detail;
  if (typeof d === 'string' && d.trim().startsWith('{')) {
    try {
      return JSON.parse(d) as Detail;
    } catch {
      return {};
    }
  }
  return {};
}

const words = (k: string) => FIELD[k] ?? k.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/_/g, ' ').toLowerCase();

/** A value in words: short, never a secret (the gateway redacts those to "[redacted]"). */
export function valueWords(v: unknown): string {
  if (v === true) return 'on';
  if (v === false) return 'off';
  if (v == null || v === '') return 'nothing';
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.length <= 3 ? v.map(valueWords).join(', ') : `${v.length} items`;
  if (typeof v === 'object') return 'new settings';
  const s = String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

/** "PATCH /api/providers/{id}" → its method and the object part of the path ("providers"). */
function route(action: string): { method: string; path: string } {
  const [method = '', path = ''] = action.split(' ');
  return { method, path: path.replace(/^\/api\//, '') };
}

/** The changes of a body, each "the priority of X from 2 to 1". */
function changes(d: Detail, target: string): string[] {
  const body = d.body ?? {};
  const out: string[] = [];
  for (const [k, v] of Object.entries(body)) {
    if (NOT_CHANGES.has(k)) continue;
    if (v === '[redacted]') {
      out.push(`replaced the ${k.toLowerCase().includes('key') ? 'key' : words(k)} of ${target}`);
      continue;
    }
    if (k === 'isActive') {
      out.push(`${v ? 'enabled' : 'disabled'} ${target}`);
      continue;
    }
    const had = d.before && k in d.before ? d.before[k] : undefined;
    out.push(had !== undefined ? `changed the ${words(k)} of ${target} from ${valueWords(had)} to ${valueWords(v)}` : `set the ${words(k)} of ${target} to ${valueWords(v)}`);
  }
  if (out.length === 0 && d.truncated) {
    const names = d.fieldNames ?? Object.keys(d.fields ?? {});
    out.push(`changed ${names.length ? names.map(words).join(', ') : 'several settings'} of ${target}`);
  }
  return out;
}

/**
 * The sentence of an entry. `names` maps ids the page knows (connections,
 * keys, combos, users) to their names, for entries recorded before the
 * gateway noted the target's name.
 */
export function auditSentence(e: AuditLike, names: ReadonlyMap<string, string> = new Map()): string {
  const d = parse(e.detail);
  const { method, path } = route(e.action);
  const who = !e.actor ? 'Someone' : e.actor === 'management token' ? 'The management token' : e.actor;
  const refused = e.status >= 400;
  const id = d.vars?.['id'];
  const objectPath = path.replace(/\/\{id\}.*$/, '');
  const noun = NOUN[objectPath] ?? '';
  const bodyName = typeof d.body?.['name'] === 'string' ? (d.body['name'] as string) : typeof d.body?.['email'] === 'string' ? (d.body['email'] as string) : '';
  const named = d.targetName || (id ? names.get(id) : undefined) || bodyName;
  const target = noun ? (named ? `${noun} ${named}` : noun) : 'the gateway';
  let what: string;
  switch (true) {
    case path === 'login':
      what = 'signed in';
      break;
    case path === 'logout':
      what = 'signed out';
      break;
    case path === 'backup' || path === 'restore':
      what = EVENT[d.event ?? ''] ?? (path === 'backup' ? 'made a backup' : 'restored a backup');
      break;
    case path === 'gateway':
      what = d.body?.['paused'] === true ? 'paused the gateway' : d.body?.['paused'] === false ? 'resumed the gateway' : 'changed the gateway';
      break;
    case path === 'resilience/reset':
      what = 'reset the circuit breakers';
      break;
    case path === 'resilience/cooldowns':
      what = 'cleared cooldowns';
      break;
    case path === 'resilience/model-cooldowns':
      what = 'reactivated locked models';
      break;
    case path === 'resilience':
      what = 'changed the resilience settings';
      break;
    case path === 'settings':
      what = `changed the settings${d.body ? ` (${Object.keys(d.body).map(words).join(', ')})` : ''}`;
      break;
    case path === 'capture':
      what = 'changed body capture';
      break;
    case path === 'rate-limits':
      what = 'changed the rate limits';
      break;
    case path === 'monitoring/health':
      what = 'reset the health counters';
      break;
    case path === 'update/check':
      what = 'checked for updates';
      break;
    case path === 'providers/import':
      what = 'imported a login';
      break;
    case path === 'providers/login/copilot':
      what = 'started a GitHub Copilot login';
      break;
    case path === 'playground/key':
      what = 'made the Playground key';
      break;
    case path.endsWith('/test'):
      what = `tested ${target}`;
      break;
    case path.endsWith('/models/refresh'):
      what = `refreshed the models of ${target}`;
      break;
    case path.startsWith('agents/'):
      what = path.endsWith('/undo') ? 'undid an agent’s configuration' : 'configured an agent';
      break;
    case method === 'POST' && Boolean(noun):
      what = `added ${noun}${bodyName ? ` ${bodyName}` : ''}`;
      break;
    case method === 'DELETE' && objectPath === 'resilience/leases':
      what = 'released a lease';
      break;
    case method === 'DELETE' && Boolean(noun):
      what = `deleted ${target}`;
      break;
    case (method === 'PATCH' || method === 'PUT') && Boolean(noun): {
      const c = changes(d, named || target);
      what = c.length ? c.join('; ') : `changed ${target}`;
      break;
    }
    default:
      what = `made a change (${method.toLowerCase()} ${objectPath || 'gateway'})`;
  }
  if (!refused) return `${who} ${what}.`;
  const code = d.refused ?? d.code;
  if (path === 'login') return `${who} could not sign in${code ? `: ${sentence(code).replace(/\.$/, '')}` : ' (wrong email or password)'}.`;
  return `${who} tried: ${what} — refused${code ? `: ${sentence(code).replace(/\.$/, '')}` : ''}.`;
}
