// The health model's fixes[] as the same buttons on every page (Overview,
// Connections, Combos, Cooldown Manager, Logs, Playground): one label, one
// action each; only the fixes that fit the target's state; each names the
// connection it acts on; a role that may not use a fix sees it disabled with
// the reason (never a click that fails with 403).

import { endpoints, getSession } from '../api';
import { clear, errorBox, h } from '../dom';
import type { AccessInfo } from '../lib/access';
import { fixAccess, fixesForState, fixLabelFor, planFix, type FixTarget } from '../lib/fixes';
import { href } from '../router';

export interface FixOptions {
  signal: AbortSignal;
  /** Where the outcome ("done" or the error) is shown. */
  message: HTMLElement;
  /** Called after a fix succeeded (reload the page's data). */
  onDone: () => Promise<void> | void;
  /** Fixes this page already offers otherwise (e.g. its own Edit button). */
  skip?: string[];
  /** Show the target's name on each button ("Replace key · Work OpenAI"), where several targets share one card. */
  nameTarget?: boolean;
  /** The session to check (default: the dashboard's; a token of unknown role is admin). */
  access?: AccessInfo | null;
}

/** The role the dashboard acts as. */
export function currentRole(): string {
  return getSession()?.role ?? 'admin';
}

/** One button (or link) per fix of t that fits its state and can act; unknown fixes are left out. */
export function fixButtons(t: FixTarget, fixes: string[] | undefined, o: FixOptions): HTMLElement[] {
  const out: HTMLElement[] = [];
  const access0 = o.access !== undefined ? o.access : getSession();
  const list = t.state ? fixesForState(t.state, fixes) : [...(fixes ?? [])];
  for (const fix of list) {
    if (o.skip?.includes(fix)) continue;
    const label = fixLabelFor(fix, t.state);
    const plan = planFix(fix, t);
    if (!label || !plan) continue;
    const text = o.nameTarget ? [label, h('span', { class: 'fix-target' }, ` · ${t.name}`)] : [label];
    const aria = `${label}: ${t.name}`;
    const access = fixAccess(fix, access0);
    if (!access.allowed) {
      // Shown, so the person knows the way out, but not usable by this role.
      out.push(
        h(
          'button',
          { type: 'button', class: 'btn btn-small', disabled: true, 'data-fix': fix, 'data-target': t.id, 'data-denied': access.reason, title: access.reason, 'aria-label': `${aria} (${access.reason})` },
          ...text,
        ),
      );
      continue;
    }
    if (plan.kind === 'link') {
      out.push(h('a', { class: 'btn btn-small', href: href(plan.href, plan.params), 'data-fix': fix, 'data-target': t.id, 'aria-label': aria }, ...text));
      continue;
    }
    const btn = h(
      'button',
      { type: 'button', class: `btn btn-small${fix === 'reset_breaker' || fix === 'release_lease' ? ' btn-warn' : ''}`, 'data-fix': fix, 'data-target': t.id, 'aria-label': aria },
      ...text,
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

/** The one line under a set of fixes a role may not use: why they are disabled. */
export function deniedNote(buttons: readonly HTMLElement[]): HTMLElement | null {
  const denied = buttons.find((b) => b.dataset['denied']);
  return denied ? h('p', { class: 'muted small fix-denied', 'data-testid': 'fix-denied' }, denied.dataset['denied'] ?? '') : null;
}
