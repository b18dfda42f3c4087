// The health model's fixes[] as the same buttons on every page (Overview,
// Connections, Combos, Cooldown Manager): one label, one action each.

import { endpoints } from '../api';
import { clear, errorBox, h } from '../dom';
import { FIX_LABEL, planFix, type FixTarget } from '../lib/fixes';
import { href } from '../router';

export interface FixOptions {
  signal: AbortSignal;
  /** Where the outcome ("done" or the error) is shown. */
  message: HTMLElement;
  /** Called after a fix succeeded (reload the page's data). */
  onDone: () => Promise<void> | void;
  /** Fixes this page already offers otherwise (e.g. its own Edit button). */
  skip?: string[];
}

/** One button (or link) per fix of t that can act; unknown fixes are left out. */
export function fixButtons(t: FixTarget, fixes: string[] | undefined, o: FixOptions): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (const fix of fixes ?? []) {
    if (o.skip?.includes(fix)) continue;
    const label = FIX_LABEL[fix];
    const plan = planFix(fix, t);
    if (!label || !plan) continue;
    if (plan.kind === 'link') {
      out.push(h('a', { class: 'btn btn-small', href: href(plan.href, plan.params), 'data-fix': fix, 'aria-label': `${label}: ${t.name}` }, label));
      continue;
    }
    const btn = h(
      'button',
      { type: 'button', class: `btn btn-small${fix === 'reset_breaker' || fix === 'release_lease' ? ' btn-warn' : ''}`, 'data-fix': fix, 'aria-label': `${label}: ${t.name}` },
      label,
    );
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      o.message.replaceChildren();
      try {
        switch (plan.kind) {
          case 'reset_breaker':
            await endpoints.resetBreaker(plan.provider);
            break;
          case 'clear_cooldown':
            await endpoints.clearCooldowns([plan.connectionId]);
            break;
          case 'unlock_models':
            for (const x of plan.targets) await endpoints.reactivateModel(x);
            break;
          case 'release_lease':
            await endpoints.releaseLease(plan.leaseId);
            break;
          case 'enable':
            await endpoints.updateConnection(plan.connectionId, { isActive: true });
            break;
        }
        if (o.signal.aborted) return;
        o.message.replaceChildren(h('p', { class: 'alert alert-success' }, `${label}: done for “${t.name}”.`));
        await o.onDone();
      } catch (err) {
        if (o.signal.aborted) return;
        btn.disabled = false;
        clear(o.message, errorBox(err));
      }
    });
    out.push(btn);
  }
  return out;
}
