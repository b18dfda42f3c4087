// Pure logic of the Combos page: the strategies and which target fields they
// use, the editor's draft (raw strings from the form) with client validation
// and the request body it becomes, target reordering, server `param` errors →
// the field they belong to, and which connections a target model names (the
// gateway's own naming rules, so explain candidates can be matched to targets).
// Unit-tested in tests/unit/combos.test.ts.

/** One member of a combo as the API stores it. */
export interface ComboTarget {
  /** "provider/model", "<prefix>/model" or a bare model name. */
  model: string;
  /** Pin: only this connection serves the target. */
  connectionId?: string;
  /** weighted: probability ∝ weight; 0 = fallback only. Default 1. */
  weight?: number;
  /** Lower first; the first tie-break of every strategy. The editor replaces it by the list order. */
  priority?: number;
  /** Tokens (context-optimized). */
  contextWindow?: number;
  /** USD per 1M tokens (cost-optimized). */
  costPer1M?: number;
}

/** GET /api/combos item. */
export interface Combo {
  id: string;
  name: string;
  strategy: string;
  targets: ComboTarget[];
  description?: string | null;
  stickyTtlMs?: number | null;
  maxRetriesPerTarget?: number | null;
  createdAt?: string | null;
  updatedAt?: string | null;
}

/** POST /api/combos and PUT /api/combos/{id} body. */
export interface ComboInput {
  name: string;
  strategy: string;
  targets: ComboTarget[];
  description?: string;
  stickyTtlMs?: number;
  maxRetriesPerTarget?: number;
}

/** The minimum a connection needs for target naming (GET /api/providers item). */
export interface ConnectionRef {
  id: string;
  provider: string;
  name?: string | null;
  prefix?: string | null;
  isActive?: boolean | null;
  models?: unknown[] | null;
}

// ---------------------------------------------------------------- strategies

export const COMBO_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
export const MAX_TARGETS = 100;
export const MAX_WEIGHT = 1000;
export const MAX_RETRIES = 5;
export const DEFAULT_MAX_RETRIES = 1;
export const MAX_STICKY_SECONDS = 86_400;
export const MAX_DESCRIPTION = 500;

/** The gateway's strategies in its order (GET /api/combos/strategies answers the same). */
export const STRATEGIES = [
  'priority',
  'weighted',
  'round-robin',
  'fill-first',
  'p2c',
  'random',
  'strict-random',
  'least-used',
  'cost-optimized',
  'reset-aware',
  'reset-window',
  'lkgp',
  'context-optimized',
  'context-relay',
  'headroom',
  'quota-weighted',
  'auto',
  'cache-optimized',
  'fusion',
  'pipeline',
] as const;

export type TargetField = 'weight' | 'contextWindow' | 'costPer1M';

export interface StrategyInfo {
  name: string;
  /** One line: what the strategy does. */
  description: string;
  /** The per-target fields this strategy ranks on (the editor shows only these). */
  fields: readonly TargetField[];
  /** Round-robin keeps a session on its target for the sticky TTL. */
  sticky: boolean;
}

const INFO: Record<string, Omit<StrategyInfo, 'name'>> = {
  priority: { description: 'Tries the targets top to bottom; the next one only when those above fail or are excluded.', fields: [], sticky: false },
  weighted: { description: 'Picks at random in proportion to each target’s weight; weight 0 is a fallback used only after the others.', fields: ['weight'], sticky: false },
  'round-robin': { description: 'Rotates through the targets request by request; a sticky TTL keeps a session on its target.', fields: [], sticky: true },
  'fill-first': { description: 'Keeps sending to the current target until it fails, then moves to the next one.', fields: [], sticky: false },
  p2c: { description: 'Power of two choices: of two random targets, the one with fewer requests in flight.', fields: [], sticky: false },
  random: { description: 'A uniformly random order for every request.', fields: [], sticky: false },
  'strict-random': { description: 'A shuffled deck: every target is used once per round, in random order.', fields: [], sticky: false },
  'least-used': { description: 'The target that served the fewest recent requests first.', fields: [], sticky: false },
  'cost-optimized': { description: 'The cheapest target first by cost per 1M tokens; targets without a cost go last.', fields: ['costPer1M'], sticky: false },
  'reset-aware': { description: 'The target whose quota window resets soonest first.', fields: [], sticky: false },
  'reset-window': { description: 'The target with the most quota left in its window first.', fields: [], sticky: false },
  lkgp: { description: 'Last known good: the target that succeeded most recently first.', fields: [], sticky: false },
  'context-optimized': {
    description: 'The largest context window first; a context-length error moves on to a larger one.',
    fields: ['contextWindow'],
    sticky: false,
  },
  'context-relay': { description: 'A session stays on the target that took its conversation; when that target drops out the session relays to the next one and stays there.', fields: [], sticky: true },
  headroom: { description: 'The target with the most room left first: quota remaining divided by requests in flight.', fields: [], sticky: false },
  'quota-weighted': { description: 'Random in proportion to quota remaining × weight, so nearly exhausted accounts are rarely picked.', fields: ['weight'], sticky: false },
  auto: { description: 'A composite score (quota left, load, cost, recent success) picks for you; no tuning needed.', fields: ['costPer1M'], sticky: false },
  'cache-optimized': { description: 'The same session always lands on the same target (rendezvous hashing), so upstream prompt caches keep hitting.', fields: [], sticky: false },
  fusion: { description: 'Interleaves providers: a failover never tries the same provider twice in a row.', fields: [], sticky: false },
  pipeline: { description: 'Stages exactly in the order written (per-target priority ignored): stage 2 only when stage 1 cannot serve.', fields: [], sticky: false },
};

export function strategyInfo(name: string): StrategyInfo {
  const known = INFO[name];
  if (known) return { name, ...known };
  return { name, description: name ? `The gateway’s “${name}” strategy.` : 'Pick a strategy.', fields: [], sticky: false };
}

export const usesField = (strategy: string, f: TargetField): boolean => strategyInfo(strategy).fields.includes(f);

// ---------------------------------------------------------------- draft

/** A target row of the editor: what the person typed, plus a stable key for focus and errors. */
export interface TargetDraft {
  key: string;
  model: string;
  /** "" = any connection that serves the model. */
  connectionId: string;
  weight: string;
  contextWindow: string;
  costPer1M: string;
}

export interface ComboDraft {
  name: string;
  strategy: string;
  description: string;
  /** Seconds, as typed. */
  stickyTtl: string;
  maxRetries: string;
  targets: TargetDraft[];
}

let keySeq = 0;
export const newTargetKey = (): string => `t${++keySeq}`;

export function emptyTarget(model = ''): TargetDraft {
  return { key: newTargetKey(), model, connectionId: '', weight: '', contextWindow: '', costPer1M: '' };
}

export function emptyDraft(strategy = 'priority'): ComboDraft {
  return { name: '', strategy, description: '', stickyTtl: '0', maxRetries: String(DEFAULT_MAX_RETRIES), targets: [emptyTarget()] };
}

const numText = (v: number | null | undefined): string => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '');

/** ms → seconds text without float noise: 1500 → "1.5". */
export function msToSecondsText(ms: number | null | undefined): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '0';
  return String(Math.round(ms) / 1000);
}

/**
 * A stored combo → an editor draft. Targets are listed in the order the
 * gateway ranks them without live signals (priority, then definition order),
 * which is the order the editor saves.
 */
export function draftFromCombo(c: Combo): ComboDraft {
  const targets = (Array.isArray(c.targets) ? c.targets : [])
    .map((t, i) => ({ t, i }))
    .sort((a, b) => (a.t.priority ?? 0) - (b.t.priority ?? 0) || a.i - b.i)
    .map(({ t }) => ({
      key: newTargetKey(),
      model: String(t.model ?? ''),
      connectionId: t.connectionId ?? '',
      weight: numText(t.weight),
      contextWindow: numText(t.contextWindow),
      costPer1M: numText(t.costPer1M),
    }));
  return {
    name: c.name ?? '',
    strategy: c.strategy || 'priority',
    description: c.description ?? '',
    stickyTtl: msToSecondsText(c.stickyTtlMs ?? 0),
    maxRetries: typeof c.maxRetriesPerTarget === 'number' ? String(c.maxRetriesPerTarget) : String(DEFAULT_MAX_RETRIES),
    targets: targets.length ? targets : [emptyTarget()],
  };
}

/** True when the stored order came from explicit priorities (saving replaces them by the list order). */
export function hasExplicitPriorities(c: Pick<Combo, 'targets'>): boolean {
  return (c.targets ?? []).some((t) => typeof t.priority === 'number' && t.priority !== 0);
}

/**
 * Moves item `index` by `delta` (−1 up, +1 down). Returns a new array and the
 * item's new index; at either end nothing moves (`moved` false, same order).
 */
export function moveItem<T>(list: readonly T[], index: number, delta: number): { list: T[]; index: number; moved: boolean } {
  const to = index + delta;
  if (index < 0 || index >= list.length || to < 0 || to >= list.length || delta === 0) return { list: [...list], index, moved: false };
  const next = [...list];
  const [item] = next.splice(index, 1);
  next.splice(to, 0, item as T);
  return { list: next, index: to, moved: true };
}

/** Field keys of the editor: top-level names, or `targets.<index>.<field>` for a target row. */
export type ComboFieldKey = 'name' | 'strategy' | 'description' | 'stickyTtl' | 'maxRetries' | 'targets' | `targets.${number}.${'model' | 'connectionId' | TargetField}`;

export const targetFieldKey = (i: number, f: 'model' | 'connectionId' | TargetField): ComboFieldKey => `targets.${i}.${f}`;

/** "combo/team" and " team " are the same name to the gateway. */
export const normalizeComboName = (name: string): string => name.trim().replace(/^combo\//, '');

function parseNumber(raw: string): number | null {
  const s = raw.trim().replace(/[\s_]/g, '').replace(/,(?=\d{3}\b)/g, '');
  if (s === '' || !/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(s)) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

export interface ComboValidation {
  errors: Map<ComboFieldKey, string>;
  /** The request body when there is no error. */
  body: ComboInput | null;
}

/**
 * Checks the draft the way the gateway will (name pattern, 1–100 targets,
 * weight 0–1000, sticky TTL and retries in range) and builds the body.
 * Only the fields the chosen strategy uses are sent; what the form hides is
 * not saved. `strategies` is the gateway's list, when known.
 */
export function validateCombo(d: ComboDraft, strategies: readonly string[] = STRATEGIES): ComboValidation {
  const errors = new Map<ComboFieldKey, string>();
  const name = normalizeComboName(d.name);
  if (!name) errors.set('name', 'Enter a name.');
  else if (!COMBO_NAME_PATTERN.test(name)) errors.set('name', 'Use 1–64 letters, digits, “.”, “_”, “:” or “-”, starting with a letter or digit.');

  const strategy = d.strategy.trim();
  if (!strategy) errors.set('strategy', 'Pick a strategy.');
  else if (strategies.length && !strategies.includes(strategy)) errors.set('strategy', `“${strategy}” is not a strategy of this gateway.`);
  const info = strategyInfo(strategy);

  const description = d.description.trim();
  if (description.length > MAX_DESCRIPTION) errors.set('description', `Keep it under ${MAX_DESCRIPTION + 1} characters (now ${description.length}).`);

  let stickyTtlMs = 0;
  if (info.sticky) {
    const s = d.stickyTtl.trim() === '' ? 0 : parseNumber(d.stickyTtl);
    if (s === null || s < 0 || s > MAX_STICKY_SECONDS) errors.set('stickyTtl', 'Enter 0–86,400 seconds (0 = not sticky).');
    else stickyTtlMs = Math.round(s * 1000);
  }

  const retries = parseNumber(d.maxRetries);
  if (retries === null || !Number.isInteger(retries) || retries < 0 || retries > MAX_RETRIES) errors.set('maxRetries', `Enter a whole number 0–${MAX_RETRIES}.`);

  if (d.targets.length === 0) errors.set('targets', 'Add at least one target.');
  else if (d.targets.length > MAX_TARGETS) errors.set('targets', `A combo has at most ${MAX_TARGETS} targets (now ${d.targets.length}).`);

  const targets: ComboTarget[] = [];
  const seen = new Map<string, number>();
  d.targets.forEach((t, i) => {
    const model = t.model.trim();
    const out: ComboTarget = { model };
    if (!model) errors.set(targetFieldKey(i, 'model'), 'Enter a model, e.g. openai/gpt-4o-mini.');
    else if (/\s/.test(model)) errors.set(targetFieldKey(i, 'model'), 'A model name has no spaces.');
    else {
      const id = `${model}\u0000${t.connectionId}`;
      const first = seen.get(id);
      if (first !== undefined) errors.set(targetFieldKey(i, 'model'), `Same model${t.connectionId ? ' and connection' : ''} as target ${first + 1}.`);
      else seen.set(id, i);
    }
    if (t.connectionId) out.connectionId = t.connectionId;
    if (info.fields.includes('weight') && t.weight.trim() !== '') {
      const w = parseNumber(t.weight);
      if (w === null || !Number.isInteger(w) || w < 0 || w > MAX_WEIGHT) errors.set(targetFieldKey(i, 'weight'), 'Enter a whole number 0–1000 (0 = fallback only).');
      else out.weight = w;
    }
    if (info.fields.includes('contextWindow') && t.contextWindow.trim() !== '') {
      const c = parseNumber(t.contextWindow);
      if (c === null || !Number.isInteger(c) || c < 1 || c > 100_000_000) errors.set(targetFieldKey(i, 'contextWindow'), 'Enter the window in tokens, e.g. 128000.');
      else out.contextWindow = c;
    }
    if (info.fields.includes('costPer1M') && t.costPer1M.trim() !== '') {
      const c = parseNumber(t.costPer1M);
      if (c === null || c < 0 || c > 1_000_000) errors.set(targetFieldKey(i, 'costPer1M'), 'Enter US dollars per 1M tokens, e.g. 0.6.');
      else out.costPer1M = c;
    }
    targets.push(out);
  });

  if (errors.size) return { errors, body: null };
  const body: ComboInput = { name, strategy, targets, description, stickyTtlMs, maxRetriesPerTarget: retries as number };
  return { errors, body };
}

/**
 * Where a server error belongs. `param` names the field ("name", "strategy",
 * "targets", "stickyTtlMs", "maxRetriesPerTarget"); a targets error whose
 * message names `targets[i].field` goes to that row's field.
 */
export function fieldForComboError(err: { param?: string | undefined; message?: string; code?: string }): ComboFieldKey | undefined {
  switch (err.param) {
    case 'name':
      return 'name';
    case 'strategy':
      return 'strategy';
    case 'description':
      return 'description';
    case 'stickyTtlMs':
      return 'stickyTtl';
    case 'maxRetriesPerTarget':
      return 'maxRetries';
    case 'targets': {
      const m = /targets\[(\d+)\]\.(model|weight|connectionId|contextWindow|costPer1M)/.exec(err.message ?? '');
      if (m) return targetFieldKey(Number(m[1]), m[2] as 'model' | 'connectionId' | TargetField);
      return 'targets';
    }
  }
  if (err.code === 'COMBO_NAME_TAKEN') return 'name';
  if (err.code === 'INVALID_NAME') return 'name';
  if (err.code === 'INVALID_STRATEGY') return 'strategy';
  if (err.code === 'INVALID_TARGETS') return 'targets';
  return undefined;
}

// ---------------------------------------------------------------- target naming

const connModels = (c: ConnectionRef): string[] => (Array.isArray(c.models) ? c.models.filter((m): m is string => typeof m === 'string') : []);

/**
 * The active connections a target model names, with the upstream model each
 * would be asked for — the gateway's rule: "<prefix>/model" names the
 * user-defined endpoint with that prefix alone; "provider/model" every
 * connection of that provider; a bare name every connection listing it.
 * (Provider aliases only the gateway knows resolve to nothing here.)
 */
export function resolveTarget(model: string, connections: readonly ConnectionRef[]): Array<{ connectionId: string; model: string }> {
  const requested = model.trim();
  if (!requested) return [];
  const active = connections.filter((c) => c.isActive !== false);
  const slash = requested.indexOf('/');
  if (slash > 0 && slash < requested.length - 1) {
    const head = requested.slice(0, slash).toLowerCase();
    const rest = requested.slice(slash + 1);
    if (connections.some((c) => (c.prefix ?? '') !== '' && c.prefix === head)) {
      return active.filter((c) => c.prefix === head).map((c) => ({ connectionId: c.id, model: rest }));
    }
    const byProvider = active.filter((c) => c.provider.toLowerCase() === head);
    if (byProvider.length) return byProvider.map((c) => ({ connectionId: c.id, model: rest }));
  }
  return active.filter((c) => connModels(c).includes(requested)).map((c) => ({ connectionId: c.id, model: requested }));
}

/**
 * Which target of a combo produced a candidate (explain candidates carry the
 * connection and the upstream model, not the target). −1 when none matches.
 */
export function targetIndexOf(
  cand: { connectionId: string; model: string },
  targets: readonly Pick<ComboTarget, 'model' | 'connectionId'>[],
  connections: readonly ConnectionRef[],
): number {
  const hit = targets.findIndex(
    (t) =>
      (!t.connectionId || t.connectionId === cand.connectionId) &&
      resolveTarget(t.model, connections).some((r) => r.connectionId === cand.connectionId && r.model === cand.model),
  );
  if (hit >= 0) return hit;
  // Naming only the gateway knows (a provider alias) resolves to nothing here:
  // fall back to the upstream model name for such targets alone.
  return targets.findIndex(
    (t) =>
      (!t.connectionId || t.connectionId === cand.connectionId) &&
      resolveTarget(t.model, connections).length === 0 &&
      (t.model === cand.model || t.model.endsWith(`/${cand.model}`)),
  );
}

/** A pinned connection that does not serve the target's model: the target could never be used. */
export function pinMismatch(t: Pick<TargetDraft, 'model' | 'connectionId'>, connections: readonly ConnectionRef[]): boolean {
  if (!t.connectionId || !t.model.trim()) return false;
  if (!connections.some((c) => c.id === t.connectionId)) return false; // unknown: the server says so
  return !resolveTarget(t.model, connections).some((r) => r.connectionId === t.connectionId);
}

/** Suggestions for the target model field: "<prefix or provider>/<model>" for each active connection's models. */
export function modelSuggestions(connections: readonly ConnectionRef[]): string[] {
  const out = new Set<string>();
  for (const c of connections) {
    if (c.isActive === false) continue;
    const head = c.prefix || c.provider;
    for (const m of connModels(c)) out.add(`${head}/${m}`);
  }
  return [...out].sort((a, b) => a.localeCompare(b));
}

/** The targets of a combo in one line: "a/m → b/m" for ordered strategies, "a/m, b/m" otherwise. */
export function targetsSummary(c: Pick<Combo, 'strategy' | 'targets'>, max = 4): string {
  const d = draftFromCombo({ id: '', name: '', ...c });
  const models = d.targets.map((t) => t.model).filter(Boolean);
  const ordered = c.strategy === 'priority' || c.strategy === 'fill-first' || c.strategy === 'round-robin';
  const shown = models.slice(0, max).join(ordered ? ' → ' : ', ');
  return models.length > max ? `${shown} … (+${models.length - max})` : shown;
}
