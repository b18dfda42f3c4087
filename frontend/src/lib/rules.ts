// Pure logic of the Rules page: what a rule matches, does, and how the
// gateway's preview answer reads as a sentence.

export interface RuleMatch {
  statuses?: number[];
  codes?: string[];
  textMarkers?: string[];
  excludeMarkers?: string[];
}

export interface OperatorRule {
  id: string;
  provider: string;
  match: RuleMatch;
  reason: string;
  scope: string;
  cooldownMs?: number;
  description?: string;
}

export interface Restatement {
  id: string;
  provider: string;
  fromStatuses: number[];
  toStatus: number;
  textMarkers: string[];
  excludeMarkers?: string[];
  defaultRetryAfterMs?: number;
}

export interface ListedRule {
  kind: 'restatement' | 'rule';
  source: 'builtin' | 'operator';
  id: string;
  provider: string;
  hits: number;
  restatement?: Restatement;
  rule?: OperatorRule;
}

export interface PreviewAnswer {
  provider: string;
  upstreamStatus: number;
  status: number;
  kind: string;
  code: string;
  scope: string;
  failover: boolean;
  leaves: string;
  clientStatus: number;
  clientRetryAfterSeconds?: number;
  modelLockMs?: number;
  cooldownMs?: number;
  restatement?: string;
  rule?: string;
  ruleSource?: string;
  scopeHonoured: boolean;
}

/** A provider's catalogue flags for rules (GET /api/rules "providers"). */
export interface ProviderRuleFlags {
  provider: string;
  ruleFullText: boolean;
  honorsRuleScope: boolean;
  egressBucketed: boolean;
}

/** "Full error text: agentrouter, opencode · Scope honoured: agentrouter, glm · IP-bucketed: opencode" */
export function flagsText(ps: ProviderRuleFlags[]): string {
  const list = (f: (p: ProviderRuleFlags) => boolean) => ps.filter(f).map((p) => p.provider).join(', ') || 'none';
  return `Built-in rules see the full error text for: ${list((p) => p.ruleFullText)} · their scope acts for: ${list((p) => p.honorsRuleScope)} (elsewhere it is a label) · IP-bucketed (egress lock): ${list((p) => p.egressBucketed)}.`;
}

/** A duration in the largest whole unit that fits: 21600000 → "6 h". */
export function duration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms >= 3_600_000) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0 && ms >= 60_000) return `${ms / 60_000} min`;
  if (ms % 1000 === 0 && ms >= 1000) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/** "403, 400 + 额度不足 / 用户额度不足, unless 无权访问模型" */
export function matchText(r: ListedRule): string {
  const parts: string[] = [];
  const m = r.rule?.match;
  const statuses = r.restatement?.fromStatuses ?? m?.statuses ?? [];
  if (statuses.length) parts.push(`HTTP ${statuses.join(', ')}`);
  if (m?.codes?.length) parts.push(`code ${m.codes.join(' / ')}`);
  const markers = r.restatement?.textMarkers ?? m?.textMarkers ?? [];
  if (markers.length) parts.push(`text “${markers.join('” / “')}”`);
  let s = parts.join(' + ') || 'anything';
  const ex = r.restatement?.excludeMarkers ?? m?.excludeMarkers ?? [];
  if (ex.length) s += `, unless “${ex.join('” / “')}”`;
  return s;
}

/** What the rule does, in one line. */
export function effectText(r: ListedRule): string {
  if (r.restatement) {
    const ra = r.restatement.defaultRetryAfterMs ? `, client told Retry-After ${duration(r.restatement.defaultRetryAfterMs)}` : '';
    return `restated to ${r.restatement.toStatus}${ra}`;
  }
  const rule = r.rule;
  if (!rule) return '';
  if (rule.reason === 'tool_count_limit') return 'fails over; the target’s tool limit is remembered and routed around';
  const cd = rule.cooldownMs ? ` for ${duration(rule.cooldownMs)}` : '';
  return `${rule.reason.replace(/_/g, ' ')} → ${rule.scope} scope${cd}`;
}

/** The preview answer as a sentence: "This error would become a 429 (Retry-After 60 s) …". */
export function previewSentence(p: PreviewAnswer): string {
  const parts: string[] = [];
  if (p.restatement) parts.push(`restated from ${p.upstreamStatus} to ${p.status} by ${p.restatement}`);
  if (p.rule) parts.push(`classified by ${p.ruleSource === 'operator' ? 'your rule' : 'built-in rule'} ${p.rule} as ${p.kind.replace(/_/g, ' ')}`);
  else parts.push(`classified as ${p.kind.replace(/_/g, ' ')} (no rule matched)`);
  const client = p.clientRetryAfterSeconds ? `${p.clientStatus} with Retry-After ${p.clientRetryAfterSeconds} s` : String(p.clientStatus);
  let leaves = p.leaves;
  if (p.modelLockMs) leaves += ` for ${duration(p.modelLockMs)}`;
  else if (p.cooldownMs) leaves += ` for ${duration(p.cooldownMs)}`;
  const scope = p.rule && !p.scopeHonoured ? ' The rule’s scope is only a label for this provider.' : '';
  return `This error would be ${parts.join(', then ')}. ${p.failover ? 'The next target is tried' : 'The answer goes back to the client'}; if nothing else serves, the client gets ${client}. Leaves routing: ${leaves}.${scope}`;
}

/** Parses the operator rules editor: a JSON array, or an error message. */
export function parseRules(text: string): { rules: OperatorRule[] } | { error: string } {
  const t = text.trim();
  if (t === '') return { rules: [] };
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch (e) {
    return { error: `Not valid JSON: ${(e as Error).message}` };
  }
  if (!Array.isArray(v)) return { error: 'The rules must be a JSON array: [ { "id": …, "provider": …, "match": {…}, "reason": …, "scope": … } ]' };
  return { rules: v as OperatorRule[] };
}
