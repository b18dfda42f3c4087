// Under a failed request (a Logs row's details, a Playground answer): each
// connection it failed on, its state now, the fixes that fit it (role-aware)
// and a link to the connection.

import type { AttemptLog, RequestLog } from '../api';
import { badge, h } from '../dom';
import { failingConnections } from '../lib/failfix';
import { healthStore, stateInfo } from '../lib/healthmodel';
import { href } from '../router';
import { deniedNote, fixButtons } from './fix-buttons';
import { canSend } from './role-gate';

export interface FailureFixOptions {
  signal: AbortSignal;
  message: HTMLElement;
  onDone: () => Promise<void> | void;
}

/** The "What to do" block of a failed request, or null when nothing can be fixed. */
export function failureFixes(l: Pick<RequestLog, 'status' | 'connectionId'> & { attempts?: AttemptLog[] | null }, o: FailureFixOptions): HTMLElement | null {
  const list = failingConnections(l, (id) => healthStore.connection(id));
  if (list.length === 0) return null;
  const admin = canSend('PUT /api/providers/{id}');
  return h(
    'div',
    { class: 'failure-fixes', 'data-testid': 'failure-fixes' },
    h('p', { class: 'small' }, h('strong', null, 'What to do')),
    h(
      'ul',
      { class: 'small lock-list' },
      list.map((c) => {
        const info = stateInfo(c.state);
        const btns = fixButtons(
          { id: c.id, name: c.name, state: c.state, providerId: c.health.provider, locks: c.health.locks ?? [], ...(c.health.leaseId ? { leaseId: c.health.leaseId } : {}) },
          c.fixes,
          { signal: o.signal, message: o.message, onDone: o.onDone },
        );
        return h(
          'li',
          { 'data-connection': c.id, 'data-state': c.state },
          h(
            'a',
            { href: admin ? href('/connections', { edit: c.id }) : href('/connections'), 'data-testid': 'connection-link', title: `Open the connection “${c.name}”` },
            c.name,
          ),
          ' ',
          badge(info.label, info.tone),
          ' ',
          h('span', { class: 'muted' }, c.reason),
          btns.length ? h('div', { class: 'btn-row' }, btns, deniedNote(btns)) : null,
        );
      }),
    ),
  );
}
