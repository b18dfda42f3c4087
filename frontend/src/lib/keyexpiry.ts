// Client key expiry and rotation on the API Keys page (issue 42 item 10):
// datetime-local ↔ RFC 3339, the Expires cell's words and tone, the rotation
// grace choices. Unit-tested in tests/unit/keyexpiry.test.ts.

import { localToIso } from './daterange';
import { formatDuration } from './format';

export { isoToLocal, localToIso } from './daterange';

export interface ExpiryState {
  /** "never", "expired", "in 3 d 4 h". */
  text: string;
  tone: 'muted' | 'ok' | 'warn' | 'bad';
  expired: boolean;
}

/** Soon: the Expires cell warns from a week before. */
export const EXPIRY_WARN_MS = 7 * 24 * 3_600_000;

/** The Expires cell of a key: never, expired (the gateway's word wins), or how long is left. */
export function expiryState(expiresAt: string | null | undefined, expired: boolean | undefined, now = Date.now()): ExpiryState {
  if (!expiresAt) return { text: 'never', tone: 'muted', expired: false };
  const t = Date.parse(expiresAt);
  if (expired || !Number.isFinite(t) || t <= now) return { text: 'expired', tone: 'bad', expired: true };
  const left = t - now;
  return { text: `in ${formatDuration(Math.max(60_000, Math.floor(left / 60_000) * 60_000))}`, tone: left < EXPIRY_WARN_MS ? 'warn' : 'ok', expired: false };
}

/** The rotation's grace choices: how long the old secret keeps working. */
export const GRACE_CHOICES: ReadonlyArray<{ ms: number; label: string }> = [
  { ms: 0, label: 'Stop the old secret now' },
  { ms: 3_600_000, label: 'Keep the old secret working for 1 hour' },
  { ms: 86_400_000, label: 'Keep the old secret working for 24 hours' },
  { ms: 7 * 86_400_000, label: 'Keep the old secret working for 7 days' },
];

/** The rule the expiry field checks before sending: empty (never) or a time in the future. */
export function checkExpiry(local: string, now = Date.now()): { iso: string | null } | { error: string } {
  if (!local) return { iso: null };
  const iso = localToIso(local);
  if (!iso) return { error: 'Enter a date and time, or leave it empty for a key that never expires.' };
  if (Date.parse(iso) <= now) return { error: 'Choose a time in the future (to stop a key now, delete it).' };
  return { iso };
}
