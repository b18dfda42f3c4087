// Controls a role may not use: shown disabled with the reason (title, aria
// label, data-denied), never a click that fails with 403. A control names the
// route it sends ("POST /api/providers"); whether the session's role may send
// it comes from the gateway's route table (GET /api/session `routes`,
// src/lib/access.ts), never a list kept here. How a page gates its writes:
// frontend/README.md, "Gating writes by role".

import { getSession } from '../api';
import { h } from '../dom';
import { routesDenied, type RouteKey } from '../lib/access';

type Routes = RouteKey | readonly RouteKey[];
const list = (r: Routes): readonly RouteKey[] => (typeof r === 'string' ? [r] : r);

/** Why the session may not send every route of `routes` ("" when it may). */
export function whyNot(routes: Routes): string {
  return routesDenied(list(routes), getSession());
}

/** Whether the session may send every route of `routes`. */
export function canSend(routes: Routes): boolean {
  return !whyNot(routes);
}

/** Marks one control denied: disabled, the reason as its title, in its accessible name and in data-denied. Idempotent. */
export function deny(b: HTMLElement, why: string): void {
  if (b instanceof HTMLButtonElement || b instanceof HTMLInputElement || b instanceof HTMLSelectElement || b instanceof HTMLTextAreaElement || b instanceof HTMLFieldSetElement) b.disabled = true;
  if (b.dataset['denied'] === why) return; // gated before: once is enough (pages call this on every update)
  b.setAttribute('aria-disabled', 'true');
  b.dataset['denied'] = why;
  b.title = why;
  if (b instanceof HTMLButtonElement || b.getAttribute('role') === 'button' || b.tagName === 'A') {
    b.setAttribute('aria-label', `${b.getAttribute('aria-label') ?? b.textContent ?? ''} (${why})`);
  }
}

/**
 * Disables each control whose route(s) the session may not send, with the
 * reason; the others stay as they are. Call it after rendering (and again
 * after re-rendering: it is idempotent).
 */
export function gateWrites(controls: ReadonlyArray<readonly [HTMLElement | null | undefined, Routes]>): void {
  for (const [b, routes] of controls) {
    if (!b) continue;
    const why = whyNot(routes);
    if (why) deny(b, why);
  }
}

/**
 * A whole form that sends `routes` when the session may not: every control
 * in it disabled and one line at its top says why (data-testid="role-denied").
 * Returns whether it was gated. Idempotent.
 */
export function gateForm(form: HTMLElement | null | undefined, routes: Routes, what?: string): boolean {
  if (!form) return false;
  const why = whyNot(routes);
  if (!why) return false;
  for (const c of form.querySelectorAll<HTMLElement>('button, input, select, textarea, fieldset')) deny(c, why);
  form.dataset['denied'] = why;
  if (!form.querySelector(':scope > [data-testid="role-denied"]')) {
    form.prepend(h('p', { class: 'muted small role-denied', 'data-testid': 'role-denied' }, what ? `${what}: ${why}` : why));
  }
  return true;
}

/** The note a page shows instead of controls it leaves out for the role (data-testid="role-denied"); null when the role may. */
export function deniedLine(routes: Routes, what?: string): HTMLElement | null {
  const why = whyNot(routes);
  return why ? h('p', { class: 'muted small role-denied', 'data-testid': 'role-denied' }, what ? `${what}: ${why}` : why) : null;
}

/**
 * A part of a page that only sends `routes` (an Add form, an import card):
 * built when the session may send them; otherwise the reason line when `what`
 * names the part, or nothing (a neighbour's line already says it).
 */
export function allowedOr(routes: Routes, build: () => HTMLElement | null, what?: string): HTMLElement | null {
  if (canSend(routes)) return build();
  return what ? deniedLine(routes, what) : null;
}
