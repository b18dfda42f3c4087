/**
 * Whether a URL an upstream named may become a link: an https URL (plain
 * http only on this machine, a local test double). A javascript: or data:
 * URL would run in the dashboard's origin when clicked.
 */
export function safeWebUrl(s: string): boolean {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  if (u.username || u.password) return false;
  if (u.protocol === 'https:') return true;
  return u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}
