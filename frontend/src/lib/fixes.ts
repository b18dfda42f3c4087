// The one fix list: the health model's `fixes[]` (docs/health-and-usage.md)
// as the same actions on every page — Overview, Connections, Combos and the
// Cooldown Manager. Pure: what each fix is called and what it does; the views
// render the buttons with views/fix-buttons.ts.

import type { HealthLock } from './healthmodel';
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

/** What a fix acts on: a connection (or a provider) with what the health model says of it. */
export interface FixTarget {
  /** Connection id (provider id for a provider-level problem). */
  id: string;
  name: string;
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
      return { kind: 'link', href: '/connections', params: { edit: t.id } };
    case 'set_price':
      // MODEL_PRICE_UNKNOWN: the Connections page's pricing editor, the model's row ready.
      return { kind: 'link', href: '/connections', params: priceFixParams(t.model ?? '', t.id) };
    default:
      return null;
  }
}
