// The routing explain answer (GET /api/routing/explain?model=…) turned into
// what the Combos page shows: eligible candidates in the order they would be
// tried, then the excluded ones, each with a badge for its reason and a
// deadline for the live countdown; and the compact live badges of one target
// row in the combo editor. Unit-tested in tests/unit/explain.test.ts.

import type { Tone } from './health';
import { targetIndexOf, type ComboTarget, type ConnectionRef } from './combos';
import { HEALTH_STATES, stateInfo, type ConnHealth } from './healthmodel';

/** The health model's entry of a connection (healthStore.connection), or undefined when unknown. */
export type HealthLookup = (connectionId: string) => Pick<ConnHealth, 'state' | 'reason'> | undefined;

export type ExclusionReason =
  | 'model_lockout'
  | 'model_cooldown'
  | 'circuit_open'
  | 'provider_cooldown'
  | 'connection_cooldown'
  | 'connection_failed'
  | 'unavailable'
  | 'lease_held';

export interface ExplainCandidate {
  /** 1-based try order of an eligible candidate; null when excluded. */
  order: number | null;
  status: 'eligible' | 'excluded' | string;
  connectionId: string;
  connectionName?: string | null;
  /** The breaker key: "openai" or "<provider>:<prefix or id>" for a user-defined endpoint. */
  provider?: string | null;
  /** The upstream model. */
  model: string;
  /** An exclusion reason, or a sentence for an eligible candidate. */
  reason?: string | null;
  /** For `unavailable`: the terminal state (banned, expired, credits_exhausted …). */
  detail?: string | null;
  transient?: boolean | null;
  remainingMs?: number | null;
  /** Set by withHealth: the health model's sentence for why it does not serve. */
  healthReason?: string | null;
}

export interface ExplainAnswer {
  model: string;
  combo?: { id: string; name: string; strategy: string } | null;
  generatedAt?: string | null;
  candidates: ExplainCandidate[];
  error?: { code: string; message: string } | null;
}

export interface ReasonInfo {
  /** Short badge text. */
  label: string;
  tone: Tone;
  /** One sentence: why this keeps the candidate out, and what ends it. */
  description: string;
}

const humanize = (s: string) => s.replace(/_/g, ' ');

/** How an exclusion reason is shown. `detail` names the terminal state of `unavailable`. */
export function reasonInfo(reason: string | null | undefined, detail?: string | null): ReasonInfo {
  switch (reason) {
    case 'model_lockout':
      return { label: 'model locked', tone: 'warn', description: 'This model is locked out on this connection after repeated errors; the lock ends by itself or on Model Cooldowns.' };
    case 'model_cooldown':
      return { label: 'model cooling', tone: 'warn', description: 'This model hit a limit on this connection (e.g. a 429) and rests until the upstream’s hint ends; the connection’s other models keep serving.' };
    case 'connection_failed':
      return { label: 'account failed', tone: 'warn', description: 'This connection failed at account level earlier in the same request (quota, auth, an account-wide limit), so its other models were not tried.' };
    case 'circuit_open':
      return { label: 'breaker open', tone: 'bad', description: 'The provider’s circuit breaker is open after repeated failures; a probe is let through when its timer ends.' };
    case 'provider_cooldown':
      return { label: 'provider cooldown', tone: 'warn', description: 'The whole provider is cooling down after errors on several of its connections.' };
    case 'connection_cooldown':
      return { label: 'cooldown', tone: 'warn', description: 'This connection is cooling down after an upstream error (e.g. a 429); it is used again when the countdown ends.' };
    case 'unavailable': {
      // A health-model state (key_rejected, unreachable …): its one label and tone.
      if (detail && (HEALTH_STATES as readonly string[]).includes(detail)) {
        const info = stateInfo(detail);
        return { label: info.label, tone: info.tone, description: info.description };
      }
      const state = detail ? humanize(detail) : '';
      return {
        label: state ? `unavailable: ${state}` : 'unavailable',
        tone: 'bad',
        description: `This connection is out of service${state ? ` (${state})` : ''} until someone fixes it; it does not recover by itself.`,
      };
    }
    case 'lease_held':
      return { label: 'leased', tone: 'muted', description: 'Another client holds an exclusive lease on this connection.' };
    default:
      return { label: reason ? humanize(reason) : 'excluded', tone: 'muted', description: reason ? `Excluded: ${humanize(reason)}.` : 'Excluded by the gateway.' };
  }
}

export interface ExplainRow extends ExplainCandidate {
  key: string;
  eligible: boolean;
  /** The badge of an excluded row. */
  info: ReasonInfo | null;
  /** Countdown deadline (epoch ms, browser clock); null when the exclusion has no timer. */
  until: number | null;
  /** The combo target that produced this candidate (−1 unknown). */
  targetIndex: number;
  /** "a/m" when the target is known, else the upstream model. */
  targetLabel: string;
  /** "openai-compatible" out of "openai-compatible:a". */
  providerLabel: string;
}

export interface ExplainModel {
  eligible: ExplainRow[];
  excluded: ExplainRow[];
  error: { code: string; message: string } | null;
  /** One sentence on top of the panel. */
  summary: string;
}

/**
 * The candidate as the health model sees it: an "eligible" answer for a
 * connection the model says is not serving (unreachable, breaker_open,
 * key_rejected, endpoint_not_found, cooling …) becomes excluded with the
 * model's label and reason, so Why? never says eligible beside a Dead combo.
 */
export function withHealth(c: ExplainCandidate, health?: HealthLookup): ExplainCandidate {
  if (c.status !== 'eligible' || !health) return c;
  const m = health(c.connectionId);
  if (!m || stateInfo(m.state).serving) return c;
  return { ...c, order: null, status: 'excluded', reason: 'health_state', detail: m.state, healthReason: m.reason ?? null };
}

/** The badge of a candidate the health model excluded. */
function healthInfo(c: ExplainCandidate): ReasonInfo {
  const info = stateInfo(c.detail);
  return { label: info.label, tone: info.tone, description: c.healthReason || info.description };
}

const infoOf = (c: ExplainCandidate): ReasonInfo => (c.reason === 'health_state' ? healthInfo(c) : reasonInfo(c.reason, c.detail));

const remainingOf = (c: ExplainCandidate) => (typeof c.remainingMs === 'number' && Number.isFinite(c.remainingMs) && c.remainingMs > 0 ? c.remainingMs : 0);

/**
 * Groups the explain answer: eligible candidates by their order, then the
 * excluded ones by combo target (definition order), then soonest back first.
 * `targets` and `connections` map a candidate back to the target that named it.
 */
export function explainModel(
  answer: ExplainAnswer | null | undefined,
  now: number,
  targets: readonly Pick<ComboTarget, 'model' | 'connectionId'>[] = [],
  connections: readonly ConnectionRef[] = [],
  health?: HealthLookup,
): ExplainModel {
  const list = Array.isArray(answer?.candidates) ? answer.candidates.filter((c) => c && typeof c.connectionId === 'string').map((c) => withHealth(c, health)) : [];
  const rows = list.map((c, i): ExplainRow => {
    const eligible = c.status === 'eligible';
    const ti = targets.length ? targetIndexOf(c, targets, connections) : -1;
    const remaining = remainingOf(c);
    return {
      ...c,
      key: `${c.connectionId}|${c.model}|${i}`,
      eligible,
      info: eligible ? null : infoOf(c),
      until: !eligible && remaining > 0 ? now + remaining : null,
      targetIndex: ti,
      targetLabel: ti >= 0 ? targets[ti]!.model : c.model,
      providerLabel: (c.provider ?? '').split(':')[0] ?? '',
    };
  });
  const big = Number.MAX_SAFE_INTEGER;
  const eligible = rows.filter((r) => r.eligible).sort((a, b) => (a.order ?? big) - (b.order ?? big));
  const excluded = rows
    .filter((r) => !r.eligible)
    .sort(
      (a, b) =>
        (a.targetIndex < 0 ? big : a.targetIndex) - (b.targetIndex < 0 ? big : b.targetIndex) ||
        (a.until ?? big) - (b.until ?? big) ||
        (a.connectionName ?? '').localeCompare(b.connectionName ?? ''),
    );
  const error = answer?.error && typeof answer.error === 'object' ? { code: String(answer.error.code ?? ''), message: String(answer.error.message ?? '') } : null;
  return { eligible, excluded, error, summary: explainSummary(eligible, excluded, error, now) };
}

const who = (r: ExplainRow) => r.connectionName || r.connectionId;

function explainSummary(eligible: ExplainRow[], excluded: ExplainRow[], error: ExplainModel['error'], now: number): string {
  if (error) return `A request would fail: ${error.message || error.code}`;
  const total = eligible.length + excluded.length;
  if (total === 0) return 'No connection serves this model.';
  if (eligible.length === 0) {
    const timed = excluded.map((r) => r.until).filter((u): u is number => u !== null);
    const soonest = timed.length ? Math.min(...timed) : null;
    return soonest !== null
      ? `Every candidate is excluded right now; the first is back in ${Math.ceil((soonest - now) / 1000)} s.`
      : 'Every candidate is excluded and none recovers by itself.';
  }
  const first = eligible[0]!;
  const out = excluded.length ? `; ${excluded.length} of ${total} excluded` : '';
  return `A request would go to ${first.targetLabel} on ${who(first)} first${eligible.length > 1 ? `, then ${eligible.length - 1} fallback${eligible.length === 2 ? '' : 's'}` : ''}${out}.`;
}

// ---------------------------------------------------------------- editor badges

export interface TargetBadge {
  label: string;
  tone: Tone;
  title: string;
  reason: string;
  /** Countdown deadline, when timed. */
  until: number | null;
}

/**
 * The live badges of one editor target row, from the explain answer for the
 * target's own model (filtered to its pinned connection): one per excluded
 * candidate (breaker / cooldown / lockout …), "available" when at least one
 * candidate can serve, "no connection" when the model resolves to nothing.
 */
export function targetBadges(answer: ExplainAnswer | null | undefined, pin: string, now: number, health?: HealthLookup): TargetBadge[] {
  if (!answer) return [];
  const cands = (answer.candidates ?? []).filter((c) => c && (!pin || c.connectionId === pin)).map((c) => withHealth(c, health));
  if (answer.error || cands.length === 0) {
    const msg = answer.error?.message || (pin ? 'The pinned connection does not serve this model.' : 'No active connection serves this model.');
    return [{ label: 'no connection', tone: 'bad', title: msg, reason: answer.error?.code || 'no_connection', until: null }];
  }
  const out: TargetBadge[] = [];
  const ok = cands.filter((c) => c.status === 'eligible');
  const names = (list: ExplainCandidate[]) => list.map((c) => c.connectionName || c.connectionId).join(', ');
  if (ok.length) {
    out.push({
      label: cands.length > 1 ? `available ${ok.length}/${cands.length}` : 'available',
      tone: 'ok',
      title: `Can be served by ${names(ok)}.`,
      reason: 'eligible',
      until: null,
    });
  }
  for (const c of cands) {
    if (c.status === 'eligible') continue;
    const info = infoOf(c);
    const remaining = remainingOf(c);
    out.push({
      label: info.label,
      tone: info.tone,
      title: `${c.connectionName || c.connectionId}: ${info.description}`,
      reason: c.reason ?? '',
      until: remaining > 0 ? now + remaining : null,
    });
  }
  return out;
}
