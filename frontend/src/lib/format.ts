// Pure formatting helpers (no DOM): durations, countdowns and the seconds hint
// shown next to millisecond settings. Unit-tested in tests/unit/format.test.ts.

/**
 * The one duration formatter: human units everywhere ("0.85 s", "1.5 s", "45 s",
 * "2 min 5 s", "1 h 2 min", "3 d 4 h"); exact milliseconds belong in tooltips
 * (see exactMs).
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  if (abs === 0) return '0 s';
  if (abs < 1000) return `${sign}${(abs / 1000).toFixed(abs < 10 ? 3 : 2).replace(/0+$/, '')} s`;
  if (abs < 60_000) {
    const s = abs / 1000;
    const text = Number.isInteger(s) ? String(s) : s.toFixed(1).replace(/\.0$/, '');
    return `${sign}${text} s`;
  }
  const totalSeconds = Math.round(abs / 1000);
  const d = Math.floor(totalSeconds / 86_400);
  const h = Math.floor((totalSeconds % 86_400) / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  const parts: string[] = [];
  if (d) parts.push(`${d} d`, ...(h ? [`${h} h`] : []));
  else if (h) parts.push(`${h} h`, ...(m ? [`${m} min`] : []));
  else parts.push(`${m} min`, ...(s ? [`${s} s`] : []));
  return sign + parts.join(' ');
}

/**
 * A ticking countdown in the same human units as formatDuration: "7 s",
 * "1 min 58 s", "1 h 2 min". Seconds are rounded up, so "now" means done.
 */
export function formatCountdown(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms) || ms <= 0) return 'now';
  return formatDuration(Math.ceil(ms / 1000) * 1000);
}

/** The exact value for a tooltip: "747,123 ms". */
export function exactMs(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '';
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** Milliseconds until `until` (a Date, ISO string or epoch ms), never negative; 0 when unknown. */
export function remainingMs(until: Date | string | number | null | undefined, now = Date.now()): number {
  if (until == null || until === '') return 0;
  const t = until instanceof Date ? until.getTime() : typeof until === 'number' ? until : Date.parse(until);
  if (!Number.isFinite(t)) return 0;
  return Math.max(0, t - now);
}

/** The hint next to a millisecond field: "= 30 s", "= 10 min", "0 = off" stays the caller's business. */
export function msHint(raw: string | number): string {
  const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (String(raw).trim() === '' || !Number.isFinite(n)) return 'milliseconds';
  return `milliseconds (= ${formatDuration(n)})`;
}

/** "a few seconds ago" style relative time for feed and log rows. */
export function formatAgo(at: Date | string | number | null | undefined, now = Date.now()): string {
  if (at == null || at === '') return '—';
  const t = at instanceof Date ? at.getTime() : typeof at === 'number' ? at : Date.parse(at);
  if (!Number.isFinite(t)) return '—';
  const diff = now - t;
  if (diff < 5_000) return 'just now'; // also a little clock skew between gateway and browser
  return `${formatDuration(Math.round(diff / 1000) * 1000)} ago`;
}

/** "openaiCompatible" / "maxWaitMs" → "Max wait"; used for generated setting labels. */
export function humanizeKey(key: string): string {
  const base = key.replace(/Ms$/, '');
  const words = base
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);
  const text = words.join(' ').replace(/\bapi\b/g, 'API').replace(/\boauth\b/g, 'OAuth');
  return text ? text.charAt(0).toUpperCase() + text.slice(1) : key;
}

/** Masks a secret for display, keeping a recognisable prefix and the last 4 characters. */
export function maskSecret(value: string, keepPrefix = 'sk-omni-'): string {
  if (!value) return '';
  const prefix = value.startsWith(keepPrefix) ? keepPrefix : '';
  const rest = value.slice(prefix.length);
  if (rest.length <= 4) return `${prefix}${'•'.repeat(rest.length)}`;
  return `${prefix}${'•'.repeat(Math.min(12, rest.length - 4))}${rest.slice(-4)}`;
}

/** "gpt-4o, gpt-4o-mini ,, o3" → ["gpt-4o", "gpt-4o-mini", "o3"] (trimmed, no blanks, no repeats). */
export function parseList(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(/[,\n]/)) {
    const v = part.trim();
    if (v && !out.includes(v)) out.push(v);
  }
  return out;
}

/** `export KEY='value'` lines for a POSIX shell, single-quoting every value. */
export function shellExports(env: Record<string, string> | null | undefined): string {
  return Object.entries(env ?? {})
    .filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
    .map(([k, v]) => `export ${k}='${String(v).replace(/'/g, `'\\''`)}'`)
    .join('\n');
}
