// Usage at a glance: requests, tokens (in / out / cached), spend (and what
// subscriptions saved) and errors per
// connection, model, key or provider over the last hour / day / week, latency
// percentiles, the breaker / cooldown timeline per provider, and CSV export.
// Data: GET /api/usage, /api/usage/timeline, /api/usage.csv (bounded: at most
// 96 buckets × 9 series, whatever the request log holds).

import { api, getToken, isAbortError } from '../api';
import { badge, clear, emptyState, errorBox, h, loading } from '../dom';
import { barChart, columnTotals, lineChart, niceScale, OTHER_COLOUR, PALETTE, timelineBar, type Segment } from '../lib/charts';
import { compactUSD, formatUSD } from '../lib/spend';
import { exactMs, formatDuration } from '../lib/format';
import { live } from '../live';
import type { ViewContext } from '../router';
import type { IsoRange } from '../lib/daterange';
import { dateRangeFields } from './date-range';

interface Totals {
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  tokensCached: number;
  costUsd?: number;
  savedUsd?: number;
  unpriced?: number;
}

interface Series {
  key: string;
  label: string;
  requests: number[];
  errors: number[];
  tokensIn: number[];
  tokensOut: number[];
  tokensCached: number[];
  costUsd?: number[];
  savedUsd?: number[];
  unpriced?: number[];
  total: Totals;
}

export interface UsageReport {
  range: string;
  by: string;
  from: string;
  to: string;
  bucketMs: number;
  buckets: number;
  series: Series[];
  totals: Totals;
  latency: { p50: number[]; p90: number[]; p99: number[]; overall: { p50: number; p90: number; p99: number } };
}

interface Timeline {
  from: string;
  to: string;
  providers: Array<{ provider: string; name: string; segments: Array<{ kind: string; state: string; connection?: string; from: string; to: string; detail?: string }> }>;
}

const RANGES = [
  ['hour', 'Last hour'],
  ['day', 'Last day'],
  ['week', 'Last week'],
] as const;
const DIMS = [
  ['connection', 'Connection'],
  ['model', 'Model'],
  ['key', 'API key'],
  ['provider', 'Provider'],
] as const;

const num = (n: number) => n.toLocaleString('en-US');

/** "12.3k", "4.5M" for chart captions. */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0).replace(/\.0$/, '')}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

/** Axis labels of a time span: dates when it crosses midnight, else times of day. */
export function axisLabel(t: number, from: number, to: number): string {
  const multiDay = new Date(from).toDateString() !== new Date(to - 1).toDateString();
  return multiDay
    ? new Date(t).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
    : new Date(t).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** The values of a chart's y axis, top to bottom: max, half, 0. */
export function yTicks(max: number, fmt: (n: number) => string = compact): string[] {
  if (!(max > 0)) return ['0'];
  return [fmt(max), fmt(Math.round(max / 2)), '0'];
}

export function renderUsage(root: HTMLElement, ctx: ViewContext): () => void {
  // No range asked for: the gateway picks the one that fits the data
  // (range=auto), so a new install's chart is never a one-pixel sliver.
  let range = ctx.params.get('range') ?? 'auto';
  if (range !== 'auto' && !RANGES.some(([r]) => r === range)) range = 'auto';
  let by = ctx.params.get('by') ?? 'connection';
  if (!DIMS.some(([d]) => d === by)) by = 'connection';
  // A custom range (from= / to= on the route, the API's own parameters).
  let custom: IsoRange | null = ctx.params.get('from') ? { from: ctx.params.get('from')!, to: ctx.params.get('to') ?? '' } : null;
  const picker = dateRangeFields('usage', (r) => {
    custom = r;
    renderRangeButtons();
    void load();
  });
  if (custom) picker.set(custom);
  /** The query of the range shown: range=, or from= and to=. */
  const rangeQuery = () => (custom ? new URLSearchParams({ from: custom.from, ...(custom.to ? { to: custom.to } : {}) }).toString() : `range=${range}`);

  const heading = h('h1', { tabindex: '-1' }, 'Usage');
  const rangeGroup = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Time range' });
  const bySelect = h('select', { id: 'usage-by' }, DIMS.map(([v, l]) => h('option', { value: v, selected: v === by ? '' : null }, l)));
  const csvBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Export CSV');
  const csvNote = h('span', { class: 'copy-note', role: 'status' });
  const body = h('div', { class: 'usage-body' });
  const timelineArea = h('section', { class: 'card', 'aria-labelledby': 'usage-tl-title' });

  function renderRangeButtons(): void {
    rangeGroup.replaceChildren(
      ...RANGES.map(([v, l]) => {
        const b = h('button', { type: 'button', class: 'btn btn-small', 'aria-pressed': String(!custom && v === range) }, l);
        b.addEventListener('click', () => {
          range = v;
          custom = null;
          customOpen = false;
          renderRangeButtons();
          void load();
        });
        return b;
      }),
      customBtn,
    );
    customBtn.setAttribute('aria-pressed', String(custom !== null || customOpen));
    picker.show(custom !== null || customOpen);
  }
  let customOpen = false;
  const customBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-testid': 'usage-custom' }, 'Custom…');
  customBtn.addEventListener('click', () => {
    customOpen = true;
    picker.show(true);
    customBtn.setAttribute('aria-pressed', 'true');
    picker.el.querySelector<HTMLInputElement>('input')?.focus();
  });

  clear(
    root,
    h('div', { class: 'page-head' }, heading),
    h('p', { class: 'muted page-intro' }, 'Requests, tokens, spend and errors from the request log, split by what served them.'),
    h(
      'div',
      { class: 'usage-toolbar' },
      rangeGroup,
      h('label', { class: 'inline-field', for: 'usage-by' }, 'Split by ', bySelect),
      csvBtn,
      csvNote,
    ),
    picker.el,
    body,
    timelineArea,
  );
  renderRangeButtons();
  clear(body, loading('Loading usage…'));

  bySelect.addEventListener('change', () => {
    by = bySelect.value;
    void load();
  });

  csvBtn.addEventListener('click', async () => {
    csvNote.textContent = '';
    try {
      const res = await fetch(`/api/usage.csv?${rangeQuery()}&by=${by}`, { headers: { Authorization: `Bearer ${getToken() ?? ''}` } });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const url = URL.createObjectURL(await res.blob());
      const a = h('a', { href: url, download: `omniroute-usage-${custom ? 'custom' : range}-by-${by}.csv` });
      document.body.append(a);
      a.click();
      a.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 1000);
      csvNote.textContent = 'CSV downloaded.';
    } catch (err) {
      csvNote.textContent = `Could not export: ${err instanceof Error ? err.message : String(err)}`;
    }
  });

  function timeLabels(rep: UsageReport): HTMLElement {
    const from = Date.parse(rep.from);
    const to = Date.parse(rep.to);
    const fmt = (t: number) => axisLabel(t, from, to);
    return h('div', { class: 'chart-axis muted small' }, h('span', null, fmt(from)), h('span', null, fmt((from + to) / 2)), h('span', null, rep.range === 'custom' && custom?.to ? fmt(to) : 'now'));
  }

  function chartCard(title: string, max: string, svg: SVGSVGElement, rep: UsageReport, legend: HTMLElement | null, testid: string, ticks: string[] = []): HTMLElement {
    return h(
      'section',
      { class: 'card chart-card', 'data-testid': testid },
      h('div', { class: 'section-head' }, h('h2', null, title), h('span', { class: 'muted small' }, max)),
      h(
        'div',
        { class: 'chart chart-with-axis' },
        ticks.length ? h('div', { class: 'chart-yaxis muted small', 'aria-hidden': 'true', 'data-testid': 'y-axis' }, ticks.map((t) => h('span', null, t))) : null,
        svg,
      ),
      timeLabels(rep),
      legend,
    );
  }

  function legendOf(items: Array<[string, string, string?]>): HTMLElement {
    return h(
      'ul',
      { class: 'legend' },
      items.map(([label, colour, title]) => h('li', { title: title ?? label }, h('span', { class: 'swatch', style: `background:${colour}` }), label)),
    );
  }

  function render(rep: UsageReport): void {
    const colours = rep.series.map((s, i) => (s.key === '~other' ? OTHER_COLOUR : PALETTE[i % PALETTE.length]!));
    const bucketTitle = (i: number) => new Date(Date.parse(rep.from) + i * rep.bucketMs).toLocaleString();
    const t = rep.totals;
    if (!t.requests) {
      clear(body, emptyState('No requests in this range', 'Charts fill in as clients send requests through the gateway.'));
      return;
    }
    const errRate = t.requests ? (t.errors / t.requests) * 100 : 0;
    const lat = rep.latency.overall;
    const stat = (label: string, value: string, title?: string) => h('div', { class: 'stat', title: title ?? null }, h('dt', null, label), h('dd', null, value));
    const summary = h(
      'dl',
      { class: 'stats stats-row card', 'data-testid': 'usage-totals' },
      stat('Requests', num(t.requests)),
      stat('Errors', `${num(t.errors)} (${errRate.toFixed(errRate < 10 ? 1 : 0)} %)`),
      stat('Tokens in', compact(t.tokensIn), num(t.tokensIn)),
      stat('Tokens out', compact(t.tokensOut), num(t.tokensOut)),
      stat('Cached', compact(t.tokensCached), num(t.tokensCached)),
      stat('Spend', formatUSD(t.costUsd ?? 0), t.unpriced ? `${num(t.unpriced)} served requests of unknown price are not included` : 'at the connections’ prices'),
      stat('Saved by subscriptions', formatUSD(t.savedUsd ?? 0), 'what flat-rate (subscription and local) connections’ answers would have cost at API prices'),
      h(
        'div',
        { class: 'stat stat-latency', title: `upper bounds of histogram bins: ${exactMs(lat.p50)}, ${exactMs(lat.p90)}, ${exactMs(lat.p99)}` },
        h('dt', null, 'Latency'),
        h('dd', null, `p50 ${formatDuration(lat.p50)}`, h('br'), h('small', null, `p90 ${formatDuration(lat.p90)} · p99 ${formatDuration(lat.p99)}`)),
      ),
    );
    const legend = legendOf(rep.series.map((s, i) => [s.label, colours[i]!, s.key]));
    const maxOf = (arrs: number[][]) => Math.max(0, ...arrs[0]!.map((_, i) => arrs.reduce((a, s) => a + (s[i] ?? 0), 0)));
    const requests = barChart('Requests per bucket', rep.series.map((s) => s.requests), colours, (si, i, v) => `${rep.series[si]!.label}: ${num(v)} requests, ${bucketTitle(i)}`);
    const errors = barChart('Errors per bucket', rep.series.map((s) => s.errors), colours, (si, i, v) => `${rep.series[si]!.label}: ${num(v)} errors, ${bucketTitle(i)}`);
    const sum = (k: 'tokensIn' | 'tokensOut' | 'tokensCached') => rep.series.reduce<number[]>((acc, s) => acc.map((v, i) => v + (s[k][i] ?? 0)), new Array<number>(rep.buckets).fill(0));
    const tokenCols = ['#3b6fd6', '#1f9d6b', '#9aa0a8'];
    const tokens = barChart('Tokens per bucket', [sum('tokensIn'), sum('tokensOut'), sum('tokensCached')], tokenCols, (si, i, v) => `${['in', 'out', 'cached'][si]}: ${num(v)} tokens, ${bucketTitle(i)}`);
    const costs = rep.series.map((s) => s.costUsd ?? new Array<number>(rep.buckets).fill(0));
    const costTop = Math.max(0, ...columnTotals(costs));
    const spend = barChart('Spend per bucket (USD)', costs, colours, (si, i, v) => `${rep.series[si]!.label}: ${formatUSD(v)}, ${bucketTitle(i)}`, niceScale(costTop));
    const latCols = ['#1f9d6b', '#d98b1e', '#d24a4a'];
    const latency = lineChart('Latency percentiles per bucket', [rep.latency.p50, rep.latency.p90, rep.latency.p99], latCols);
    const tableRows = rep.series.map((s, i) =>
      h(
        'tr',
        null,
        h(
          'th',
          { scope: 'row', 'data-label': DIMS.find(([d]) => d === rep.by)?.[1] ?? 'Key' },
          h('span', null, h('span', { class: 'swatch', style: `background:${colours[i]}` }), h('span', { title: s.key }, s.label)),
        ),
        h('td', { class: 'num', 'data-label': 'Requests' }, num(s.total.requests)),
        h('td', { class: 'num', 'data-label': 'Errors' }, s.total.errors ? badge(num(s.total.errors), 'bad') : '0'),
        h('td', { class: 'num', 'data-label': 'Tokens in' }, num(s.total.tokensIn)),
        h('td', { class: 'num', 'data-label': 'Tokens out' }, num(s.total.tokensOut)),
        h('td', { class: 'num', 'data-label': 'Cached' }, num(s.total.tokensCached)),
        h('td', { class: 'num', 'data-label': 'Spend' }, formatUSD(s.total.costUsd ?? 0)),
        h('td', { class: 'num', 'data-label': 'Saved' }, formatUSD(s.total.savedUsd ?? 0)),
      ),
    );
    clear(
      body,
      summary,
      h(
        'div',
        { class: 'chart-grid' },
        chartCard('Requests', `max ${compact(maxOf(rep.series.map((s) => s.requests)))} per bucket`, requests, rep, legend, 'chart-requests', yTicks(maxOf(rep.series.map((s) => s.requests)))),
        chartCard('Tokens', 'in · out · cached', tokens, rep, legendOf([['in', tokenCols[0]!], ['out', tokenCols[1]!], ['cached', tokenCols[2]!]]), 'chart-tokens', yTicks(Math.max(0, ...sum('tokensIn'), ...sum('tokensOut'), ...sum('tokensCached')))),
        chartCard('Spend', `${formatUSD(t.costUsd ?? 0)} in range · saved ${formatUSD(t.savedUsd ?? 0)}`, spend, rep, legend.cloneNode(true) as HTMLElement, 'chart-spend', costTop > 0 ? [compactUSD(niceScale(costTop)), compactUSD(niceScale(costTop) / 2), compactUSD(0)] : [compactUSD(0)]),
        chartCard('Errors', `${num(t.errors)} in range`, errors, rep, null, 'chart-errors', yTicks(maxOf(rep.series.map((s) => s.errors)))),
        chartCard('Latency', 'p50 · p90 · p99', latency, rep, legendOf([['p50', latCols[0]!], ['p90', latCols[1]!], ['p99', latCols[2]!]]), 'chart-latency', yTicks(Math.max(0, ...rep.latency.p99), (n) => formatDuration(n))),
      ),
      h(
        'section',
        { class: 'card' },
        h('h2', null, `By ${DIMS.find(([d]) => d === rep.by)?.[1].toLowerCase() ?? rep.by}`),
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'table table-cards' },
            h('thead', null, h('tr', null, [DIMS.find(([d]) => d === rep.by)?.[1] ?? 'Key', 'Requests', 'Errors', 'Tokens in', 'Tokens out', 'Cached', 'Spend', 'Saved'].map((x) => h('th', { scope: 'col' }, x)))),
            h('tbody', null, tableRows),
          ),
        ),
      ),
    );
  }

  function renderTimeline(tl: Timeline): void {
    const start = Date.parse(tl.from);
    const end = Date.now();
    const head = h('h2', { id: 'usage-tl-title' }, 'Breakers and cooldowns');
    if (!tl.providers.length) {
      clear(timelineArea, head, emptyState('No breaker or cooldown in this range', 'Stretches appear here when a provider breaker opens or a connection cools down.'));
      return;
    }
    clear(
      timelineArea,
      head,
      h('p', { class: 'muted small' }, h('span', { class: 'swatch timeline-bad' }), ' breaker open  ', h('span', { class: 'swatch timeline-warn' }), ' cooldown, half-open or degraded'),
      h(
        'ul',
        { class: 'timeline', 'data-testid': 'timeline' },
        tl.providers.map((p) => {
          const segs: Segment[] = p.segments.map((s) => ({
            from: Date.parse(s.from),
            to: Date.parse(s.to),
            tone: s.kind === 'breaker' && s.state === 'OPEN' ? 'bad' : 'warn',
            title: `${segmentLabel(s)}${s.detail ? ` (${s.detail})` : ''}: ${new Date(Date.parse(s.from)).toLocaleTimeString()}–${new Date(Date.parse(s.to)).toLocaleTimeString()}, ${formatDuration(Date.parse(s.to) - Date.parse(s.from))}`,
          }));
          return h(
            'li',
            { class: 'timeline-row', 'data-provider': p.provider },
            h('span', { class: 'timeline-name', title: p.provider }, p.name || p.provider),
            h('div', { class: 'timeline-track' }, timelineBar(`${p.name}: ${segs.length} stretches`, segs, start, end)),
          );
        }),
      ),
    );
  }

  let seq = 0;
  async function load(): Promise<void> {
    const mine = ++seq;
    try {
      const rep = await api.get<UsageReport>(`/api/usage?${rangeQuery()}&by=${by}`, ctx.signal);
      if (ctx.signal.aborted || mine !== seq) return;
      if (!custom && range === 'auto' && RANGES.some(([r]) => r === rep.range)) {
        // The gateway chose the range that fits the data: show it as chosen.
        range = rep.range;
        renderRangeButtons();
      }
      history.replaceState(history.state, '', `#/usage?${rangeQuery()}&by=${by}`);
      const tl = await api.get<Timeline>(`/api/usage/timeline?${rangeQuery()}`, ctx.signal);
      if (ctx.signal.aborted || mine !== seq) return;
      render(rep);
      renderTimeline(tl);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(body, errorBox(err, () => void load()));
    }
  }

  // New requests refresh the charts at most every 5 s.
  let pending = 0;
  const off = live.subscribe('request', () => {
    if (pending) return;
    pending = window.setTimeout(() => {
      pending = 0;
      void load();
    }, 5000);
  });
  void load();
  return () => {
    off();
    window.clearTimeout(pending);
  };
}

/** What a timeline segment was: a breaker state, a connection cooldown or a connection's locked models. */
export function segmentLabel(s: { kind: string; state: string; connection?: string }): string {
  if (s.kind === 'breaker') return `breaker ${s.state}`;
  if (s.kind === 'model_lock') return `${s.connection ?? 'connection'}: models locked`;
  return `${s.connection ?? 'connection'} cooling down`;
}
