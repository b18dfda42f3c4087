// The captured bodies of one request: the four bodies with JSON folding (SSE
// events one by one) and the diff between the client's request and what was
// sent upstream, which makes the translation visible.
import { endpoints, type RequestBodies } from '../api';
import { clear, errorBox, h, loading, openDialog, type Child } from '../dom';
import { lineDiff, pretty } from '../lib/playground';

/** A JSON value as a foldable tree (objects and arrays in <details>). */
export function jsonTree(v: unknown, key?: string, depth = 0): HTMLElement {
  const label = key !== undefined ? [h('span', { class: 'jt-key' }, JSON.stringify(key)), ': '] : [];
  if (v && typeof v === 'object') {
    const arr = Array.isArray(v);
    const entries = arr ? (v as unknown[]).map((x, i) => [String(i), x] as const) : Object.entries(v as Record<string, unknown>);
    const details = h(
      'details',
      { class: 'jt-node', open: depth < 3 },
      h('summary', null, ...label, arr ? `[ ${entries.length} ]` : `{ ${entries.length} }`),
      h(
        'div',
        { class: 'jt-children' },
        entries.map(([k, x]) => jsonTree(x, arr ? undefined : k, depth + 1)),
      ),
    );
    return details;
  }
  return h('div', { class: 'jt-leaf' }, ...label, h('span', { class: `jt-${v === null ? 'null' : typeof v}` }, JSON.stringify(v)));
}

/** A body as folded JSON, SSE events (each data payload folded), or text. */
export function bodyView(body: string): HTMLElement {
  if (!body) return h('p', { class: 'muted small' }, 'Empty.');
  try {
    return h('div', { class: 'json-tree' }, jsonTree(JSON.parse(body)));
  } catch {
    /* not one JSON document */
  }
  const blocks = body.replace(/\r\n/g, '\n').split('\n\n').filter((b) => b.trim());
  if (blocks.length && blocks.every((b) => /^(data|event|id|retry|:)/m.test(b))) {
    return h(
      'ol',
      { class: 'sse-events' },
      blocks.map((b) => {
        const ev = b.match(/^event: ?(.*)$/m)?.[1];
        const data = b
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, ''))
          .join('\n');
        let view: Child = h('code', null, data);
        try {
          view = jsonTree(JSON.parse(data));
        } catch {
          /* [DONE] and the like */
        }
        return h('li', null, ev ? h('span', { class: 'chip chip-inline' }, ev) : null, view);
      }),
    );
  }
  return h('pre', { class: 'body-pre' }, body);
}

/** The diff of the client's request and the upstream request, both indented. */
export function diffView(a: string, b: string): HTMLElement {
  const lines = lineDiff(pretty(a), pretty(b));
  return h(
    'pre',
    { class: 'body-pre body-diff', 'data-testid': 'body-diff' },
    lines.map((l) => h('span', { class: l.op === '-' ? 'diff-del' : l.op === '+' ? 'diff-add' : 'diff-same' }, `${l.op} ${l.text}`)),
  );
}

/** The tabbed viewer of one request's bodies. */
export function bodiesViewer(b: RequestBodies): HTMLElement {
  const tabs: Array<[string, () => HTMLElement]> = [
    [`Client request (${b.clientFormat})`, () => bodyView(b.clientRequest)],
    [`Sent upstream (${b.upstreamFormat || '—'})`, () => bodyView(b.upstreamRequest)],
    ['Diff: client → upstream', () => diffView(b.clientRequest, b.upstreamRequest)],
    ['Upstream answer', () => bodyView(b.upstreamResponse)],
    ['Client answer', () => bodyView(b.clientResponse)],
  ];
  const panel = h('div', { class: 'body-panel', role: 'tabpanel' });
  const buttons = tabs.map(([label], i) => {
    const btn = h('button', { type: 'button', role: 'tab', class: 'btn btn-small', 'aria-selected': String(i === 0) }, label);
    btn.addEventListener('click', () => show(i));
    return btn;
  });
  function show(i: number): void {
    buttons.forEach((btn, j) => btn.setAttribute('aria-selected', String(i === j)));
    clear(panel, tabs[i]![1]());
  }
  show(0);
  return h(
    'div',
    { class: 'bodies-viewer', 'data-testid': 'bodies-viewer' },
    h(
      'p',
      { class: 'muted small' },
      'Redacted: keys, bearer tokens and the connection’s own secret are replaced by [redacted].',
      b.truncatedBytes ? ` ${b.truncatedBytes} bytes were cut (per-body cap).` : '',
    ),
    h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Bodies' }, buttons),
    panel,
  );
}

/** Opens the viewer of a request's captured bodies. */
export function openBodies(requestId: string): void {
  const body = h('div', null, loading('Loading the bodies…'));
  openDialog({ title: 'Request and response bodies', content: body, wide: true });
  endpoints
    .requestBodies(requestId)
    .then((b) => clear(body, bodiesViewer(b)))
    .catch((err) => clear(body, errorBox(err)));
}
