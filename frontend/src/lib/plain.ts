// Small plain-words helpers for what the gateway stores raw: an upstream's
// error text (often "429: {\"error\":{…}}") and a connection's sign-in kind.
// Pure; unit-tested in tests/unit/plain.test.ts.

/** A connection's authType in words. */
export const AUTH_WORDS: Record<string, string> = {
  apikey: 'API key',
  oauth: 'subscription login',
  none: 'no sign-in',
};

/** The message inside an upstream's JSON error body, if the text holds one. */
function jsonMessage(text: string): string | null {
  const i = text.indexOf('{');
  if (i < 0) return null;
  try {
    const v = JSON.parse(text.slice(i)) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const m = typeof v.error === 'object' && v.error ? v.error.message : typeof v.error === 'string' ? v.error : (v.message ?? v.detail);
    return typeof m === 'string' && m.trim() ? m.trim() : null;
  } catch {
    return null;
  }
}

/**
 * An upstream's error text as words: the message of a JSON body instead of
 * the body, without a leading HTTP status ("429: …", "HTTP 503 – …"), cut
 * to `max` characters.
 */
export function upstreamWords(text: string | null | undefined, max = 160): string {
  if (!text) return '';
  let t = jsonMessage(text) ?? text;
  t = t.replace(/^\s*(HTTP\s*)?\d{3}\b\s*[:\-–—]?\s*/i, '').replace(/\s+/g, ' ').trim();
  if (!t) return 'The provider answered with an error.';
  t = t.charAt(0).toUpperCase() + t.slice(1);
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}
