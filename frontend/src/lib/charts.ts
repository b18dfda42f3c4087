// Hand-rolled SVG charts for the Usage page: stacked bars, lines and a
// timeline. The geometry helpers are pure (unit-tested); the builders return
// SVG elements that scale to their container (viewBox, no fixed pixel width).

const SVG = 'http://www.w3.org/2000/svg';

/** Colours of the series, in order; "Other" is always grey. */
export const PALETTE = ['#3b6fd6', '#1f9d6b', '#d98b1e', '#b04bb8', '#d24a4a', '#2aa3b8', '#7b8b2a', '#8a5a3c'];
export const OTHER_COLOUR = '#9aa0a8';

/** A round upper bound for an axis: 1, 2, 2.5, 5 × 10^n at or above v (at least 1). */
export function niceMax(v: number): number {
  if (!Number.isFinite(v) || v <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** Sum of each column across series. */
export function columnTotals(series: readonly (readonly number[])[]): number[] {
  const n = Math.max(0, ...series.map((s) => s.length));
  const out = new Array<number>(n).fill(0);
  for (const s of series) s.forEach((v, i) => (out[i]! += v || 0));
  return out;
}

export interface BarRect {
  series: number;
  index: number;
  x: number;
  y: number;
  w: number;
  h: number;
  value: number;
}

/**
 * Stacked bars in a width × height box: one column per index, series stacked
 * bottom-up, scaled to max (niceMax of the tallest column when omitted). Zero
 * values make no rectangle.
 */
export function stackedBars(series: readonly (readonly number[])[], width: number, height: number, max?: number): BarRect[] {
  const totals = columnTotals(series);
  const top = max ?? niceMax(Math.max(0, ...totals));
  const n = totals.length || 1;
  const slot = width / n;
  const w = Math.max(slot * 0.8, 0.5);
  const out: BarRect[] = [];
  const base = new Array<number>(totals.length).fill(0);
  series.forEach((s, si) => {
    s.forEach((v, i) => {
      if (!v) return;
      const hh = (v / top) * height;
      base[i]! += hh;
      out.push({ series: si, index: i, x: i * slot + (slot - w) / 2, y: height - base[i]!, w, h: hh, value: v });
    });
  });
  return out;
}

/**
 * Polyline points of values over a width × height box scaled to max. Buckets
 * without data (0) are skipped, so a quiet hour is a gap, not a dive to zero.
 */
export function linePoints(values: readonly number[], width: number, height: number, max: number): string {
  const n = values.length;
  if (!n) return '';
  const step = n > 1 ? width / (n - 1) : 0;
  const pts: string[] = [];
  values.forEach((v, i) => {
    if (v > 0) pts.push(`${round(i * step)},${round(height - (v / (max || 1)) * height)}`);
  });
  return pts.join(' ');
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

const W = 600;
const H = 160;

function frame(label: string): SVGSVGElement {
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label, class: 'chart-svg' });
  for (const f of [0.25, 0.5, 0.75]) svg.append(el('line', { x1: 0, x2: W, y1: H * f, y2: H * f, class: 'chart-grid' }));
  return svg;
}

/** A round upper bound for an axis of any scale (USD cents too): 1, 2, 2.5, 5 × 10^n at or above v; 1 for nothing. */
export function niceScale(v: number): number {
  if (!Number.isFinite(v) || v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v * (1 - 1e-12)) return m * p;
  return 10 * p;
}

/** A stacked bar chart; titles give each bar's exact value on hover; max scales it (niceMax of the tallest column when omitted). */
export function barChart(label: string, series: readonly (readonly number[])[], colours: readonly string[], titles: (series: number, index: number, value: number) => string, max?: number): SVGSVGElement {
  const svg = frame(label);
  for (const r of stackedBars(series, W, H, max)) {
    const rect = el('rect', { x: round(r.x), y: round(r.y), width: round(r.w), height: round(r.h), fill: colours[r.series] ?? OTHER_COLOUR });
    const t = el('title', {});
    t.textContent = titles(r.series, r.index, r.value);
    rect.append(t);
    svg.append(rect);
  }
  return svg;
}

/** A line chart of several series on one scale. */
export function lineChart(label: string, series: readonly (readonly number[])[], colours: readonly string[]): SVGSVGElement {
  const svg = frame(label);
  const max = niceMax(Math.max(0, ...series.flat()));
  series.forEach((s, i) => {
    if (s.filter((v) => v > 0).length === 1) {
      // One bucket with data: a dot, since a one-point polyline draws nothing.
      const at = s.findIndex((v) => v > 0);
      const [x, y] = linePoints(s, W, H, max).split(',').map(Number);
      if (at >= 0) svg.append(el('circle', { cx: x ?? 0, cy: y ?? 0, r: 3, fill: colours[i] ?? OTHER_COLOUR }));
      return;
    }
    svg.append(el('polyline', { points: linePoints(s, W, H, max), fill: 'none', stroke: colours[i] ?? OTHER_COLOUR, 'stroke-width': 2, 'vector-effect': 'non-scaling-stroke' }));
  });
  return svg;
}

export interface Segment {
  from: number;
  to: number;
  tone: 'bad' | 'warn';
  title: string;
}

/** Position of [from, to] inside [start, end] as fractions (clipped); null when outside. */
export function segmentSpan(from: number, to: number, start: number, end: number): { left: number; width: number } | null {
  const a = Math.max(from, start);
  const b = Math.min(to, end);
  if (!(end > start) || b <= a) return null;
  return { left: (a - start) / (end - start), width: (b - a) / (end - start) };
}

/** One timeline row: coloured stretches over [start, end]. */
export function timelineBar(label: string, segments: readonly Segment[], start: number, end: number): SVGSVGElement {
  const svg = el('svg', { viewBox: `0 0 ${W} 20`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label, class: 'timeline-svg' });
  svg.append(el('rect', { x: 0, y: 0, width: W, height: 20, class: 'timeline-bg' }));
  for (const s of segments) {
    const span = segmentSpan(s.from, s.to, start, end);
    if (!span) continue;
    const rect = el('rect', { x: round(span.left * W), y: 2, width: Math.max(round(span.width * W), 1.5), height: 16, class: `timeline-${s.tone}` });
    const t = el('title', {});
    t.textContent = s.title;
    rect.append(t);
    svg.append(rect);
  }
  return svg;
}
