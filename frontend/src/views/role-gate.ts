// Buttons a role may not use: shown disabled with the reason (title, aria
// label, data-denied), never a click that fails with 403.

import { roleDenied } from '../lib/fixes';
import { currentRole } from './fix-buttons';

/** Disables each button its role need is above the session's role; the others stay as they are. */
export function gateByRole(buttons: ReadonlyArray<readonly [HTMLElement | null | undefined, 'operator' | 'admin']>, role = currentRole()): void {
  for (const [b, need] of buttons) {
    if (!b) continue;
    const why = roleDenied(need, role);
    if (!why) continue;
    if (b instanceof HTMLButtonElement) b.disabled = true;
    if (b.dataset['denied'] === why) continue; // gated before: once is enough (pages call this on every update)
    b.setAttribute('aria-disabled', 'true');
    b.dataset['denied'] = why;
    b.title = why;
    b.setAttribute('aria-label', `${b.getAttribute('aria-label') ?? b.textContent ?? ''} (${why})`);
  }
}
