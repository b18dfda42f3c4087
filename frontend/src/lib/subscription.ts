/**
 * What the Connections page shows of a subscription (OAuth) connection: the
 * usage windows its upstream last reported (5-hour and weekly), the Claude
 * usage wall state (slow lane, limit reset), and whether it needs a new
 * sign-in. Pure functions of the connection JSON, so they are unit-tested.
 */

export interface QuotaWindow {
  utilization: number;
  resetsAt?: string;
}

export interface WallState {
  lowPriorityMode?: boolean;
  autoLimitReset?: boolean;
  inLane?: boolean;
  laneUntil?: string | null;
  lastLaneEnd?: string;
  coolOffUntil?: string | null;
  budgetExhaustedUntil?: string | null;
  resetResult?: string;
  resetNextAt?: string | null;
  resetBackoffUntil?: string | null;
}

export interface SubscriptionView {
  providerSpecificData?: unknown;
  quota?: { fiveHour?: QuotaWindow | null; weekly?: QuotaWindow | null; daily?: QuotaWindow | null; dailyModel?: string; status?: string } | null;
  wall?: WallState | null;
  testStatus?: string | null;
  authType?: string;
}

/** The CLI a connection was imported from ("claude-code", "codex", "gemini-cli"), if any. */
export function importSource(c: SubscriptionView): string | undefined {
  const d = c.providerSpecificData;
  if (d && typeof d === 'object' && typeof (d as Record<string, unknown>)['importedFrom'] === 'string') {
    return (d as Record<string, string>)['importedFrom'];
  }
  return undefined;
}

/** True when the login expired for good: the user must sign in with the CLI and import again. */
export function needsReimport(c: SubscriptionView): boolean {
  return c.authType === 'oauth' && c.testStatus === 'expired';
}

const time = (iso: string, now: Date): string => {
  const d = new Date(iso);
  const sameDay = d.toDateString() === now.toDateString();
  const hm = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return sameDay ? hm : `${d.toLocaleDateString(undefined, { weekday: 'short' })} ${hm}`;
};

/** One meter: label, whole percent used (0–100) and its reset, e.g. "5h 42% · resets 14:05". */
export function meter(label: string, w: QuotaWindow | null | undefined, now = new Date()): { label: string; percent: number; text: string } | null {
  if (!w || typeof w.utilization !== 'number' || w.utilization < 0) return null;
  const percent = Math.round(Math.min(1, w.utilization) * 100);
  return { label, percent, text: `${label} ${percent}%${w.resetsAt ? ` · resets ${time(w.resetsAt, now)}` : ''}` };
}

/**
 * The quota meters of a connection (5-hour, weekly, then a Gemini CLI
 * login's most used daily model quota, labelled with its model), empty when
 * never reported.
 */
export function meters(c: SubscriptionView, now = new Date()) {
  const q = c.quota;
  if (!q) return [];
  const day = q.dailyModel ? `day (${q.dailyModel})` : 'day';
  return [meter('5h', q.fiveHour, now), meter('week', q.weekly, now), meter(day, q.daily, now)].filter((m): m is NonNullable<typeof m> => m !== null);
}

/** Human lines for the usage wall state, e.g. "slow lane until 14:05", "reset used, next Tue 09:00". */
export function wallLines(w: WallState | null | undefined, now = new Date()): string[] {
  if (!w) return [];
  const out: string[] = [];
  if (w.inLane && w.laneUntil) out.push(`slow lane until ${time(w.laneUntil, now)}`);
  else if (w.coolOffUntil) out.push(`slow lane cooling off until ${time(w.coolOffUntil, now)}`);
  if (w.budgetExhaustedUntil) out.push(`slow-lane budget used until ${time(w.budgetExhaustedUntil, now)}`);
  switch (w.resetResult) {
    case 'reset':
      out.push(`reset used${w.resetNextAt ? `, next ${time(w.resetNextAt, now)}` : ''}`);
      break;
    case 'already_used':
    case 'not_offered':
      out.push(`reset ${w.resetResult === 'already_used' ? 'already used' : 'not offered'}${w.resetNextAt ? `, next ${time(w.resetNextAt, now)}` : ''}`);
      break;
    case 'failed':
      if (w.resetBackoffUntil) out.push(`reset failed, retry after ${time(w.resetBackoffUntil, now)}`);
      break;
  }
  return out;
}
