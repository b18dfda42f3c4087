// A key's spend against its budget (the Keys page's meter) and the budget and
// limits form's parsing, pure so they are unit-tested (docs/COST.md).

import type { ApiKey, KeyBudget, KeyLimits, KeyMoney } from '../api';

/** USD with enough digits for a cent budget: $0.0123, $12.34, $1,234. */
export function formatUSD(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const a = Math.abs(n);
  const digits = a === 0 ? 2 : a < 1 ? 4 : a < 1000 ? 2 : 0;
  return `$${n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

export interface Meter {
  /** Spent share of the budget, 0..1 (clamped for the bar). */
  fraction: number;
  /** The share as a whole percent (not clamped: 130 % over). */
  percent: number;
  /** ok under 80 %, warn from 80 %, bad at 100 % (refused). */
  level: 'ok' | 'warn' | 'bad';
  /** "$0.0080 of $0.0100 today", "800 of 1,000 tokens this month"; with holds "$0.0008 spent + $0.0012 held of $0.0020 today". */
  text: string;
  /** "2 requests in flight hold $0.0012" when requests in flight hold part of the spend, else "". */
  held: string;
}

const PERIOD_TEXT: Record<KeyBudget['period'], string> = { day: 'today', month: 'this month', total: 'in total' };

/** The meter of a key with a budget (the larger share of its USD and token caps); null without one. */
export function meterOf(k: Pick<ApiKey, 'budget' | 'spend'>): Meter | null {
  const b = k.budget;
  if (!b || (b.usd == null && b.tokens == null)) return null;
  const usd = k.spend?.usd ?? 0;
  const tokens = k.spend?.tokens ?? 0;
  const heldUsd = Math.min(Math.max(k.spend?.heldUsd ?? 0, 0), usd);
  const heldTokens = Math.min(Math.max(k.spend?.heldTokens ?? 0, 0), tokens);
  const n = (x: number) => x.toLocaleString('en-US');
  const parts: Array<{ share: number; text: string }> = [];
  if (b.usd != null)
    parts.push({
      share: b.usd > 0 ? usd / b.usd : usd > 0 ? Infinity : 1,
      text: heldUsd > 0 ? `${formatUSD(usd - heldUsd)} spent + ${formatUSD(heldUsd)} held of ${formatUSD(b.usd)}` : `${formatUSD(usd)} of ${formatUSD(b.usd)}`,
    });
  if (b.tokens != null)
    parts.push({
      share: b.tokens > 0 ? tokens / b.tokens : 1,
      text: heldTokens > 0 ? `${n(tokens - heldTokens)} spent + ${n(heldTokens)} held of ${n(b.tokens)} tokens` : `${n(tokens)} of ${n(b.tokens)} tokens`,
    });
  const inFlight = k.spend?.inFlight ?? 0;
  const heldParts = [heldUsd > 0 ? formatUSD(heldUsd) : '', heldTokens > 0 && b.tokens != null ? `${n(heldTokens)} tokens` : ''].filter(Boolean);
  const held = inFlight > 0 && heldParts.length ? `${inFlight} request${inFlight === 1 ? '' : 's'} in flight hold${inFlight === 1 ? 's' : ''} ${heldParts.join(' and ')}` : '';
  const top = parts.reduce((a, p) => (p.share > a.share ? p : a));
  const share = Number.isFinite(top.share) ? top.share : 1;
  return {
    fraction: Math.min(1, Math.max(0, share)),
    percent: Math.round(share * 100),
    level: share >= 1 ? 'bad' : share >= 0.8 ? 'warn' : 'ok',
    text: `${parts.map((p) => p.text).join(' · ')} ${PERIOD_TEXT[b.period] ?? b.period}`,
    held,
  };
}

/** The raw values of the budget and limits form. */
export interface MoneyInput {
  usd: string;
  tokens: string;
  period: string;
  rpm: string;
  tpm: string;
  /** The "allow models of unknown price" box (only with a USD budget). */
  allowUnpriced?: boolean;
}

/** The form's values as the API's budget and limits (null: none), or the first error. */
export function parseMoney(v: MoneyInput): KeyMoney | { error: string; field: keyof MoneyInput } {
  const num = (s: string) => (s.trim() === '' ? undefined : Number(s.trim()));
  const usd = num(v.usd);
  const tokens = num(v.tokens);
  const rpm = num(v.rpm);
  const tpm = num(v.tpm);
  if (usd !== undefined && !(Number.isFinite(usd) && usd >= 0)) return { error: 'The USD budget must be a number of dollars, 0 or more.', field: 'usd' };
  if (tokens !== undefined && !(Number.isInteger(tokens) && tokens >= 0)) return { error: 'The token budget must be a whole number, 0 or more.', field: 'tokens' };
  if (rpm !== undefined && !(Number.isInteger(rpm) && rpm >= 1)) return { error: 'Requests per minute must be a whole number, at least 1.', field: 'rpm' };
  if (tpm !== undefined && !(Number.isInteger(tpm) && tpm >= 1)) return { error: 'Tokens per minute must be a whole number, at least 1.', field: 'tpm' };
  const period = v.period === 'day' || v.period === 'month' || v.period === 'total' ? v.period : 'month';
  let budget: KeyBudget | null = null;
  if (usd !== undefined || tokens !== undefined) {
    budget = { period };
    if (usd !== undefined) budget.usd = usd;
    if (tokens !== undefined) budget.tokens = tokens;
    if (usd !== undefined && v.allowUnpriced) budget.allowUnpriced = true;
  }
  let limits: KeyLimits | null = null;
  if (rpm !== undefined || tpm !== undefined) {
    limits = {};
    if (rpm !== undefined) limits.rpm = rpm;
    if (tpm !== undefined) limits.tpm = tpm;
  }
  return { budget, limits };
}

/** USD for a narrow chart axis: $0, 0.5¢, 2.5¢, 50¢, $2.5, $120, $1.2k. */
export function compactUSD(n: number): string {
  if (!Number.isFinite(n) || n <= 0) return '$0';
  if (n < 1) return `${Number((n * 100).toPrecision(2))}¢`;
  if (n < 1000) return `$${Number(n.toPrecision(3))}`;
  if (n < 1_000_000) return `$${Number((n / 1000).toPrecision(2))}k`;
  return `$${Number((n / 1_000_000).toPrecision(2))}M`;
}
