// Every number the Overview shows, from one pass over one health report: the
// status line ("3 of 10 connections serving"), the Connections tiles, the
// live feed's health line, the provider rows and the dead combos' "back in".
// They cannot disagree because they are read from the same report by this
// one function (tests/unit/overview-numbers.test.ts checks a mixed state).

import type { Tone } from './health';
import { backIn, connectionCounts, instant, stateBadge, statusLine, type ConnectionCounts, type HealthReport, type ProviderHealthM } from './healthmodel';

/** One provider row: never "Degraded" beside "1 of 1 serving" without saying why. */
export interface ProviderRow {
  id: string;
  name: string;
  label: string;
  tone: Tone;
  /** Why it is not fully serving ("" when it is), shown in the row. */
  reason: string;
  /** "1 of 2". */
  serving: string;
  /** Epoch ms it is back (null: serving, or not by itself). */
  until: number | null;
}

/** A dead combo's back-in and each target's. */
export interface ComboBack {
  id: string;
  name: string;
  /** "back in 30 s", or "" when no target comes back by itself. */
  back: string;
  targets: Array<{ model: string; serving: boolean; back: string }>;
}

export interface OverviewNumbers {
  line: string;
  counts: ConnectionCounts;
  /** The live feed's line for this report ("3 of 10 serving · 1 cooling down · …"). */
  feed: string;
  providers: ProviderRow[];
  deadCombos: ComboBack[];
}

/** Words under a target that does not come back by itself. */
export const NEEDS_A_FIX = 'does not come back by itself: needs a fix';

/** The provider row of p: a provider whose connections all serve reads Serving (with its warning), never Degraded beside "1 of 1". */
export function providerRow(p: ProviderHealthM): ProviderRow {
  const total = p.total ?? 0;
  const serving = p.serving ?? 0;
  const b = stateBadge(p.state);
  const allServe = total > 0 && serving === total;
  const label = allServe && p.state === 'degraded' ? 'Serving' : b.label;
  const tone: Tone = allServe && p.state === 'degraded' ? 'warn' : b.tone;
  return {
    id: p.id,
    name: p.name || p.id,
    label,
    tone,
    reason: p.state === 'serving' ? '' : (p.reason ?? ''),
    serving: `${serving} of ${total}`,
    until: instant(p.until),
  };
}

/** The feed's words for the connection split. */
export function countsLine(n: ConnectionCounts): string {
  if (!n.total) return 'no connection yet';
  const bits = [`${n.serving} of ${n.total} serving`];
  if (n.cooling) bits.push(`${n.cooling} cooling down`);
  if (n.breakerOpen) bits.push(`${n.breakerOpen} breaker open`);
  if (n.outOfService) bits.push(`${n.outOfService} out of service`);
  return bits.join(' · ');
}

/** Every Overview number from r. */
export function overviewNumbers(r: HealthReport | null | undefined, now = Date.now()): OverviewNumbers {
  const counts = connectionCounts(r?.connections);
  return {
    line: statusLine(r, now),
    counts,
    feed: countsLine(counts),
    providers: (r?.providers ?? []).map(providerRow),
    deadCombos: (r?.combos ?? [])
      .filter((c) => c.state === 'dead')
      .map((c) => ({
        id: c.id ?? c.name,
        name: c.name,
        back: backIn(c.until, now),
        targets: (c.targets ?? []).map((t) => ({ model: t.model, serving: t.serving, back: t.serving ? '' : backIn(t.until, now) || NEEDS_A_FIX })),
      })),
  };
}
