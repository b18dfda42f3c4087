// Pieces shared by the Model Cooldowns page and the Cooldown Manager: the
// scope badge, a ticking countdown element, and the ticker that drives them.

import { badge, formatTime, h } from '../dom';
import { formatCountdown } from '../lib/format';
import { scopeInfo } from '../lib/lockouts';

export function scopeBadge(scope: string | null | undefined): HTMLElement {
  const s = scopeInfo(scope);
  const el = badge(s.label, s.tone, s.description);
  el.setAttribute('data-testid', 'scope');
  return el;
}

/** "1:58" that the page ticker keeps current (`data-until` is the deadline in epoch ms). */
export function countdown(until: number, testId = 'countdown'): HTMLElement {
  return h(
    'span',
    { class: 'countdown', 'data-until': String(until), 'data-testid': testId, title: `until ${formatTime(new Date(until))}` },
    formatCountdown(until - Date.now()),
  );
}

/**
 * Updates every countdown under `root` once a second; calls `onExpired` when
 * one reaches zero (the page then drops the row and re-renders). Returns the stop function.
 */
export function startCountdowns(root: HTMLElement, onExpired: (now: number) => void, everyMs = 1000): () => void {
  const timer = window.setInterval(() => {
    const now = Date.now();
    let expired = false;
    for (const el of root.querySelectorAll<HTMLElement>('[data-until]')) {
      const left = Number(el.dataset['until']) - now;
      if (left <= 0) expired = true;
      else el.textContent = formatCountdown(left);
    }
    if (expired) onExpired(now);
  }, everyMs);
  return () => window.clearInterval(timer);
}

/** Keeps keyboard focus on "the same" control across a re-render (by data-focus-key), with fallbacks. */
export function focusKeyOf(el: Element | null): string | undefined {
  return (el as HTMLElement | null)?.dataset?.['focusKey'];
}

export function restoreFocus(root: HTMLElement, keys: Array<string | undefined>, fallback?: HTMLElement): void {
  for (const key of keys) {
    if (!key) continue;
    const el = root.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(key)}"]`);
    if (el && !(el as HTMLButtonElement).disabled) {
      el.focus();
      return;
    }
  }
  fallback?.focus();
}
