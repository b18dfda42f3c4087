// The Logs page's Key, Tokens and Cost cells and its replay link, pure so
// they are unit-tested (issue 42 item 7).

import type { RequestLog } from '../api';
import { formatUSD } from './spend';

/** A cell's text and the longer words of its tooltip. */
export interface CellText {
  text: string;
  title: string;
}

/** The key a request came with: its name, never its secret; a deleted key by its id's start; none without a key. */
export function keyCell(apiKeyId: string | undefined, names: ReadonlyMap<string, string>): CellText {
  if (!apiKeyId) return { text: '—', title: 'No client key (requireApiKey is off)' };
  const name = names.get(apiKeyId);
  if (name) return { text: name, title: `Client key “${name}”` };
  return { text: `${apiKeyId.slice(0, 8)}…`, title: `A key no longer on the gateway (id ${apiKeyId})` };
}

const n = (v: number | null | undefined): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
const count = (v: number): string => v.toLocaleString('en-US');

/** Tokens in → out ("1,200 → 85"); cached input in the tooltip; "—" when none were counted. */
export function tokensCell(l: Pick<RequestLog, 'promptTokens' | 'completionTokens' | 'cachedTokens'>): CellText {
  const inTok = n(l.promptTokens);
  const outTok = n(l.completionTokens);
  const cached = n(l.cachedTokens);
  if (!inTok && !outTok) return { text: '—', title: 'No tokens counted (nothing was served)' };
  return {
    text: `${count(inTok)} → ${count(outTok)}`,
    title: `${count(inTok)} tokens in${cached ? ` (${count(cached)} cached)` : ''}, ${count(outTok)} out`,
  };
}

/** What the answer cost: "$0.0012", "<$0.0001", "$0" (a flat-rate connection: what it saved in the tooltip), "—" when unknown or nothing was served. */
export function costCell(l: Pick<RequestLog, 'costUsd' | 'savedUsd' | 'status'>): CellText {
  const c = l.costUsd;
  if (c === null || c === undefined || !Number.isFinite(c)) {
    const served = l.status >= 200 && l.status < 400;
    return { text: '—', title: served ? 'Price unknown: set the model’s price on Connections' : 'Nothing was served: nothing charged' };
  }
  const saved = n(l.savedUsd);
  if (c === 0) return { text: '$0', title: saved ? `Flat-rate connection: ${formatUSD(saved)} at API prices` : 'Nothing charged' };
  if (c < 0.0001) return { text: '<$0.0001', title: `$${c.toPrecision(2)}` };
  return { text: formatUSD(c), title: `$${c}` };
}

/** The Playground link that replays a row: its model, and its request id when its body was captured (the Playground reads its messages). */
export function replayHref(l: Pick<RequestLog, 'model' | 'requestId' | 'hasBodies'>): string | null {
  if (!l.model) return null;
  const q = new URLSearchParams({ model: l.model });
  if (l.hasBodies && l.requestId) q.set('replay', l.requestId);
  return `#/playground?${q}`;
}
