import { formatDuration } from './format';
/**
 * Concurrency caps and live admission state of a connection (guide §4–§5):
 * the connection dialog's "model=cap" lines, and the short "in flight ·
 * queued · cap" text the Connections page shows.
 */

/** Per exact upstream model id, the most requests in flight at once. */
export type ModelCaps = Record<string, number>;

export interface ParsedCaps {
  caps: ModelCaps;
  /** One sentence per bad line ("line 2: …"); empty when valid. */
  errors: string[];
}

const MAX_CAP = 10_000;

/**
 * parseModelCaps reads one `model=cap` per line (blank lines and surrounding
 * spaces ignored). Keys are exact upstream model ids (`glm-5`, not
 * `zai/glm-5`); caps are whole numbers from 1 to 10000.
 */
export function parseModelCaps(text: string): ParsedCaps {
  const caps: ModelCaps = {};
  const errors: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const eq = line.lastIndexOf('=');
    const model = eq > 0 ? line.slice(0, eq).trim() : '';
    const cap = eq > 0 ? line.slice(eq + 1).trim() : '';
    if (!model || !/^\d+$/.test(cap)) {
      errors.push(`line ${i + 1}: write model=cap, e.g. glm-5=1`);
      return;
    }
    const n = Number(cap);
    if (n < 1 || n > MAX_CAP) {
      errors.push(`line ${i + 1}: the cap of ${model} must be from 1 to ${MAX_CAP}`);
      return;
    }
    if (model.length > 200) {
      errors.push(`line ${i + 1}: the model id is longer than 200 characters`);
      return;
    }
    if (model in caps) {
      errors.push(`line ${i + 1}: ${model} is listed twice`);
      return;
    }
    caps[model] = n;
  });
  return { caps, errors };
}

/** formatModelCaps writes caps back as sorted `model=cap` lines. */
export function formatModelCaps(caps: unknown): string {
  if (!caps || typeof caps !== 'object') return '';
  return Object.entries(caps as Record<string, unknown>)
    .filter(([, v]) => typeof v === 'number' && v > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

/** sameCaps reports whether two cap maps say the same thing. */
export function sameCaps(a: ModelCaps, b: unknown): boolean {
  return formatModelCaps(a) === formatModelCaps(b);
}

/** The live gate and queue state of a connection (GET /api/rate-limits, connection.live). */
export interface LiveLimits {
  effective?: boolean;
  inFlight?: number;
  waiting?: number;
  queued?: number;
  maxConcurrent?: number;
  modelConcurrency?: ModelCaps;
  pausedUntil?: string | null;
}

/**
 * describeLive is the Connections page's one-line summary, e.g.
 * "2 in flight · 1 queued · cap 2 · queue on". Empty when there is nothing
 * to say (idle, no cap, no queue).
 */
export function describeLive(l: LiveLimits | null | undefined, now = Date.now()): string {
  if (!l) return '';
  const parts: string[] = [];
  const inFlight = l.inFlight ?? 0;
  const queued = Math.max(l.queued ?? 0, l.waiting ?? 0);
  if (inFlight > 0 || l.maxConcurrent) parts.push(`${inFlight} in flight`);
  if (queued > 0) parts.push(`${queued} queued`);
  if (l.maxConcurrent) parts.push(`cap ${l.maxConcurrent}`);
  const models = Object.keys(l.modelConcurrency ?? {}).length;
  if (models) parts.push(`${models} model cap${models === 1 ? '' : 's'}`);
  if (l.pausedUntil && Date.parse(l.pausedUntil) > now) parts.push('paused by a retry hint');
  if (l.effective) parts.push('queue on');
  return parts.join(' · ');
}

/**
 * queueNote is the Logs row's note on admission: how long the request
 * waited and why, or which admission code refused it.
 */
export function queueNote(queueMs: number | null | undefined, reason: string | null | undefined): string {
  const ms = queueMs ?? 0;
  const why = (reason ?? '').trim();
  if (ms <= 0 && !why) return '';
  if (/^[A-Z_]+$/.test(why)) return `refused: ${why}`;
  // The same units as the latency beside it ("queued 2.3 s", not "2266 ms").
  return ms > 0 ? `queued ${formatDuration(ms)}${why ? ` (${why})` : ''}` : why;
}
