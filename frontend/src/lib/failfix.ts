// Which connections a failed request's fixes act on (Logs rows, Playground
// answers): the connections its attempts failed on and the ones routing
// excluded, each with what the health model says of it now. Pure.

import type { AttemptLog, RequestLog } from '../api';
import { fixesForState } from './fixes';
import { stateInfo, type ConnHealth } from './healthmodel';

export interface FailingConnection {
  id: string;
  name: string;
  state: string;
  label: string;
  /** The health model's reason, in words. */
  reason: string;
  /** The fixes that fit its state. */
  fixes: string[];
  health: ConnHealth;
}

/** The connection ids a failed request touched, in order, once each. */
export function failedConnectionIds(l: Pick<RequestLog, 'status' | 'connectionId'> & { attempts?: AttemptLog[] | null }): string[] {
  if (l.status < 400) return [];
  const ids: string[] = [];
  const add = (id?: string) => {
    if (id && !ids.includes(id)) ids.push(id);
  };
  for (const a of Array.isArray(l.attempts) ? l.attempts : []) {
    if (a.verdict === 'success' || a.verdict === 'wait') continue;
    add(a.connectionId);
  }
  add(l.connectionId);
  return ids;
}

/**
 * The connections of a failed request that have a fix or are not serving
 * now, as the health model sees them; connections the model does not know
 * (deleted) are left out.
 */
export function failingConnections(
  l: Pick<RequestLog, 'status' | 'connectionId'> & { attempts?: AttemptLog[] | null },
  lookup: (id: string) => ConnHealth | undefined,
): FailingConnection[] {
  const out: FailingConnection[] = [];
  for (const id of failedConnectionIds(l)) {
    const m = lookup(id);
    if (!m) continue;
    const fixes = fixesForState(m.state, m.fixes);
    if (m.serving && fixes.length === 0) continue;
    const info = stateInfo(m.state);
    out.push({ id, name: m.name || id, state: String(m.state), label: info.label, reason: m.reason || info.description, fixes, health: m });
  }
  return out;
}
