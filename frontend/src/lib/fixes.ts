// The one fix list: the health model's `fixes[]` (docs/health-and-usage.md)
// as the same actions on every page — Overview, Connections, Combos and the
// Cooldown Manager. Pure: what each fix is called and what it does; the views
// render the buttons with views/fix-buttons.ts.

import type { HealthLock } from './healthmodel';
import { routesDenied, type AccessInfo, type RouteKey } from './access';
import { priceFixParams } from './pricing';

/** The button label of each fix the health model names. */
export const FIX_LABEL: Record<string, string> = {
  reset_breaker: 'Reset breaker',
  clear_cooldown: 'Clear cooldown',
  unlock_models: 'Unlock models',
  release_lease: 'Release lease',
  replace_key: 'Replace key',
  enable: 'Enable',
  edit_connection: 'Open connection',
  set_price: 'Set its price',
};

/**
 * The one fix of a state only a person ends (the health model's own rule,
 * backend/health fitFixes): clearing a cooldown, resetting a breaker or
 * unlocking models never brings back a rejected key, a wrong base URL or an
 * upstream that does not answer.
 */
const OWN_FIX: Record<string, string> = {
  key_rejected: 'replace_key',
  endpoint_not_found: 'edit_connection',
  unreachable: 'edit_connection',
  terminal: 'edit_connection',
};

/** The fixes that fit a state: its own fix for a state only a person ends; enable / replace key when disabled; all otherwise. */
export function fixesForState(state: string | null | undefined, fixes: readonly string[] | null | undefined): string[] {
  const own = OWN_FIX[state ?? ''];
  if (own) return [own];
  if (state === 'disabled') return (fixes ?? []).filter((f) => f === 'enable' || f === 'replace_key');
  return [...(fixes ?? [])];
}

/** The button label of a fix for a state: the state's own words ("Fix base URL" for a URL answering 404). */
export function fixLabelFor(fix: string, state?: string | null): string | undefined {
  if (fix === 'edit_connection') {
    if (state === 'endpoint_not_found') return 'Fix base URL';
    if (state === 'unreachable') return 'Check address';
  }
  return FIX_LABEL[fix];
}

/**
 * The routes each fix sends (its role comes from the gateway's route table,
 * `GET /api/session` `routes`, never a list here). A link to the editor
 * counts as the save it leads to.
 */
export const FIX_ROUTES: Record<string, RouteKey[]> = {
  reset_breaker: ['POST /api/resilience/reset'],
  clear_cooldown: ['POST /api/resilience/cooldowns'],
  unlock_models: ['DELETE /api/resilience/model-cooldowns'],
  release_lease: ['DELETE /api/resilience/leases/{id}'],
  enable: ['PUT /api/providers/{id}'],
  replace_key: ['PUT /api/providers/{id}'],
  edit_connection: ['PUT /api/providers/{id}'],
  set_price: ['PATCH /api/providers/{id}'], // its pricing
};

/** Whether the session may use fix, and if not, why (shown on the disabled button). An unknown fix needs admin. */
export function fixAccess(fix: string, s: AccessInfo | null | undefined): { allowed: boolean; reason: string } {
  const reason = s?.role ? routesDenied(FIX_ROUTES[fix] ?? ['PUT /api/providers/{id}'], s) : '';
  return { allowed: !reason, reason };
}

export { roleDenied } from './access';

/** What a fix acts on: a connection (or a provider) with what the health model says of it. */
export interface FixTarget {
  /** Connection id (provider id for a provider-level problem). */
  id: string;
  name: string;
  /** Its health state (the fixes shown are those that fit it). */
  state?: string;
  /** Breaker key ("openai-compatible:lab"). */
  providerId?: string;
  locks?: HealthLock[];
  leaseId?: string;
  /** The model a fix is about (set_price: the model of unknown price). */
  model?: string;
}

/** One step a fix takes: an API call, or a link to the connection's editor. */
export type FixPlan =
  | { kind: 'link'; href: string; params: Record<string, string> }
  | { kind: 'reset_breaker'; provider: string }
  | { kind: 'clear_cooldown'; connectionId: string }
  | { kind: 'unlock_models'; targets: Array<{ provider: string; connectionId: string; model: string }> }
  | { kind: 'release_lease'; leaseId: string }
  | { kind: 'enable'; connectionId: string };

/**
 * What fix does for t, or null when it cannot (an unknown fix, a lease fix
 * without the lease id). Replace key and Open connection go to the
 * connection's editor (replace key with the key field in focus).
 */
export function planFix(fix: string, t: FixTarget): FixPlan | null {
  switch (fix) {
    case 'reset_breaker':
      return { kind: 'reset_breaker', provider: t.providerId ?? t.id };
    case 'clear_cooldown':
      return { kind: 'clear_cooldown', connectionId: t.id };
    case 'unlock_models': {
      const provider = (t.providerId ?? '').split(':')[0] ?? '';
      const targets = (t.locks ?? []).map((l) => ({ provider, connectionId: t.id, model: l.model }));
      return targets.length ? { kind: 'unlock_models', targets } : null;
    }
    case 'release_lease':
      return t.leaseId ? { kind: 'release_lease', leaseId: t.leaseId } : null;
    case 'enable':
      return { kind: 'enable', connectionId: t.id };
    case 'replace_key':
      return { kind: 'link', href: '/connections', params: { edit: t.id, field: 'apiKey' } };
    case 'edit_connection':
      // A wrong or unreachable address: the editor with the base URL in focus.
      return t.state === 'endpoint_not_found' || t.state === 'unreachable'
        ? { kind: 'link', href: '/connections', params: { edit: t.id, field: 'baseUrl' } }
        : { kind: 'link', href: '/connections', params: { edit: t.id } };
    case 'set_price':
      // MODEL_PRICE_UNKNOWN: the Connections page's pricing editor, the model's row ready.
      return { kind: 'link', href: '/connections', params: priceFixParams(t.model ?? '', t.id) };
    default:
      return null;
  }
}
