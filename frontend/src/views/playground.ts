// Playground: a real request through the gateway to any model, combo or
// connection, in the client format chosen, its answer streamed as it comes,
// the request's attempt timeline beside it (from its log row) and the same
// request as a curl command with the key masked. Requests run under the
// dedicated “playground” key (created on first use, revocable on API Keys);
// the dashboard never sees its secret.
import { CSRF_HEADER, describeError, endpoints, getToken, isAbortError, type ApiKey, type AttemptLog, type Connection, type RequestLog } from '../api';
import { badge, clear, copyButton, field, h } from '../dom';
import { formatDuration } from '../lib/format';
import { buildRequest, curlCommand, FORMATS, replayOf, sseData, textOf, type ClientFormat, type ReplayPrefill } from '../lib/playground';
import { plainCode, sentence } from '../lib/words';
import { healthStore } from '../lib/healthmodel';
import { failureFixes } from './failure-fixes';
import type { ViewContext } from '../router';
import { EXCLUSION_TEXT, isOkStatus, timelineSpans } from './logs';
import { canSetPrice, priceFixLink } from './pricing';

/** How often and how long the log row of a finished request is looked for (rows are written in batches). */
const ROW_POLL_MS = 400;
const ROW_POLL_TRIES = 30;

/** A field across the whole form row (model names are long). */
function wide(el: HTMLElement): HTMLElement {
  el.classList.add('field-wide');
  return el;
}

export function renderPlayground(root: HTMLElement, ctx: ViewContext): () => void {
  let connections: Connection[] = [];
  let key: ApiKey | null = null;
  let running: AbortController | null = null;
  /** A logged request replayed from Logs (#/playground?model=…&replay=<requestId>): its earlier messages and other fields. */
  let replay: ReplayPrefill | null = null;

  const modelInput = h('input', { id: 'pg-model', type: 'text', list: 'pg-models', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'provider/model or a combo' });
  modelInput.value = ctx.params.get('model') ?? '';
  const modelList = h('datalist', { id: 'pg-models' });
  const connSelect = h('select', { id: 'pg-connection' }, h('option', { value: '' }, 'Any (normal routing)'));
  const formatSelect = h('select', { id: 'pg-format' }, FORMATS.map((f) => h('option', { value: f.value }, f.label)));
  const streamBox = h('input', { id: 'pg-stream', type: 'checkbox', checked: true });
  const prompt = h('textarea', { id: 'pg-prompt', rows: 3, spellcheck: 'false' });
  prompt.value = 'Say hello in one short sentence.';
  const send = h('button', { type: 'submit', class: 'btn btn-primary', 'data-testid': 'pg-send' }, 'Send');
  const stop = h('button', { type: 'button', class: 'btn', disabled: true }, 'Stop');
  const status = h('p', { class: 'small', 'aria-live': 'polite', 'data-testid': 'pg-status' });
  const output = h('pre', { class: 'pg-output', 'data-testid': 'pg-output', 'aria-live': 'polite' });
  const raw = h('pre', { class: 'body-pre pg-raw', 'data-testid': 'pg-raw' });
  const timeline = h('div', { class: 'pg-timeline', 'data-testid': 'pg-timeline' }, h('p', { class: 'muted small' }, 'Send a request to see which targets it tried.'));
  const curl = h('pre', { class: 'body-pre pg-curl', 'data-testid': 'pg-curl' });
  const keyNote = h('p', { class: 'muted small', 'data-testid': 'pg-key' }, 'Requests run under the “playground” key, made on first use.');
  const replayNote = h('p', { class: 'small', 'data-testid': 'pg-replay', 'aria-live': 'polite', hidden: true });

  const form = h(
    'form',
    { class: 'card pg-form', novalidate: true },
    h(
      'div',
      { class: 'form-grid' },
      wide(field('Model or combo', modelInput)),
      field('Connection', connSelect, 'Pin one connection: no failover to others'),
      field('Client format', formatSelect),
      h('div', { class: 'field field-check' }, h('label', { for: 'pg-stream' }, streamBox, ' Stream the answer')),
    ),
    modelList,
    replayNote,
    field('Prompt', prompt),
    h('div', { class: 'form-actions' }, send, stop),
    keyNote,
  );

  clear(
    root,
    h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Playground')),
    h('p', { class: 'muted page-intro' }, 'Send a real request through the gateway and watch how it was routed.'),
    form,
    h(
      'div',
      { class: 'pg-grid' },
      h('section', { class: 'card pg-answer', 'aria-labelledby': 'pg-answer-title' }, h('h2', { id: 'pg-answer-title' }, 'Answer'), status, output, h('details', null, h('summary', { class: 'small' }, 'Raw answer'), raw)),
      h('section', { class: 'card', 'aria-labelledby': 'pg-tl-title' }, h('h2', { id: 'pg-tl-title' }, 'Attempts'), timeline),
    ),
    h(
      'section',
      { class: 'card pg-curl-card', 'aria-labelledby': 'pg-curl-title' },
      h('div', { class: 'page-head' }, h('h2', { id: 'pg-curl-title' }, 'The same request with curl'), copyButton(() => curl.textContent ?? '', { label: 'Copy curl' })),
      h('p', { class: 'muted small' }, 'The key is masked: put your own client key in its place.'),
      curl,
    ),
  );

  const current = () => {
    const f = formatSelect.value as ClientFormat;
    const req = buildRequest(f, modelInput.value.trim(), prompt.value, streamBox.checked, replay);
    return { f, req };
  };
  function updateCurl(): void {
    const { f, req } = current();
    const masked = key?.keyMasked || 'sk-omni-…';
    let text = curlCommand(location.origin, f, req, masked, streamBox.checked);
    const conn = connections.find((c) => c.id === connSelect.value);
    if (conn) text = `# pinned to “${conn.name}” here; a key does the same with allowedConnections\n${text}`;
    curl.textContent = text;
  }
  for (const el of [modelInput, formatSelect, streamBox, prompt, connSelect]) el.addEventListener('input', updateCurl);
  connSelect.addEventListener('change', updateCurl);

  /** Fills the form from a logged request's captured body: its format, earlier messages and last prompt (the model comes from the link). */
  async function loadReplay(requestId: string): Promise<void> {
    replayNote.hidden = false;
    replayNote.textContent = 'Reading the logged request…';
    try {
      const b = await endpoints.requestBodies(requestId, ctx.signal);
      if (ctx.signal.aborted) return;
      replay = replayOf(b.clientFormat, b.clientRequest);
      if (!replay) {
        replayNote.textContent = b.truncatedBytes
          ? 'The logged request was cut when it was captured: only its model is filled in.'
          : 'The logged request is not in a format the Playground sends: only its model is filled in.';
        return;
      }
      formatSelect.value = replay.format;
      prompt.value = replay.prompt;
      const earlier = replay.history.length;
      replayNote.textContent = `Replaying a logged request: ${earlier ? `its ${earlier} earlier message${earlier === 1 ? '' : 's'} are sent before the prompt` : 'its prompt is below'}${Object.keys(replay.extra).length ? `, with its ${Object.keys(replay.extra).join(', ')}` : ''}. Change the format to send the prompt alone.`;
      updateCurl();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      replayNote.textContent = `${describeError(err).message} — only its model is filled in.`;
    }
  }

  async function load(): Promise<void> {
    const [conns, combos] = await Promise.all([endpoints.listConnections(ctx.signal).catch(() => []), endpoints.listCombos(ctx.signal).catch(() => [])]);
    if (ctx.signal.aborted) return;
    connections = conns;
    const names = new Set<string>();
    for (const c of combos) names.add(c.name);
    for (const c of conns)
      for (const m of (c.servedModels ?? c.models ?? []) as unknown[]) {
        const id = typeof m === 'string' ? m : (m as { id?: string })?.id;
        if (id) names.add(`${c.prefix || c.provider}/${id}`);
      }
    clear(modelList, [...names].sort().map((n) => h('option', { value: n })));
    for (const c of conns) connSelect.append(h('option', { value: c.id }, c.name));
    updateCurl();
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run();
  });
  stop.addEventListener('click', () => running?.abort());

  async function run(): Promise<void> {
    if (!modelInput.value.trim()) {
      status.textContent = 'Choose a model or combo first.';
      modelInput.focus();
      return;
    }
    running?.abort();
    const ac = new AbortController();
    running = ac;
    ctx.signal.addEventListener('abort', () => ac.abort(), { once: true });
    send.disabled = true;
    stop.disabled = false;
    output.textContent = '';
    raw.textContent = '';
    clear(timeline, h('p', { class: 'muted small' }, 'Waiting for the answer…'));
    status.textContent = 'Sending…';
    const { f, req } = current();
    try {
      if (!key) {
        key = await endpoints.playgroundKey();
        keyNote.textContent = `Requests run under the key “${key.name}” (${key.keyMasked ?? ''}), listed on API Keys; delete it there to revoke it — the next request makes a new one.`;
        updateCurl();
      }
      const sep = req.path.includes('?') ? '&' : '?';
      const url = `/api/playground${req.path}${connSelect.value ? `${sep}connection=${encodeURIComponent(connSelect.value)}` : ''}`;
      const t0 = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${getToken() ?? ''}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', [CSRF_HEADER]: '1' },
        body: JSON.stringify(req.body),
        signal: ac.signal,
        cache: 'no-store',
      });
      const requestId = res.headers.get('X-OmniRoute-Request-Id');
      // Served by the connection's name (the header's id), never the raw provider id.
      const servedId = res.headers.get('X-OmniRoute-Selected-Connection-Id');
      const served = servedId ? connName(servedId) : res.headers.get('X-OmniRoute-Provider');
      status.textContent = `${res.status} ${res.ok ? 'streaming…' : 'error'}`;
      let text = '';
      let all = '';
      let pending = '';
      const isSSE = (res.headers.get('Content-Type') ?? '').startsWith('text/event-stream');
      const reader = res.body?.getReader();
      const dec = new TextDecoder();
      while (reader) {
        const { done, value } = await reader.read();
        if (done) break;
        const chunk = dec.decode(value, { stream: true });
        all += chunk;
        raw.textContent = all;
        if (!isSSE) continue;
        const { data, rest } = sseData(pending + chunk);
        pending = rest;
        for (const d of data) {
          try {
            text += textOf(f, JSON.parse(d));
          } catch {
            /* [DONE] */
          }
        }
        output.textContent = text;
      }
      let errCode = '';
      if (!isSSE) {
        try {
          const j = JSON.parse(all);
          text = res.ok ? textOf(f, j) : String(j?.error?.message ?? all);
          errCode = res.ok ? '' : String(j?.error?.code ?? '');
        } catch {
          text = all;
        }
        output.textContent = text;
      }
      const ms = Math.round(performance.now() - t0);
      status.textContent = `${res.status} in ${formatDuration(ms)}${served ? ` · served by ${served}` : ''}`;
      if (errCode === 'MODEL_PRICE_UNKNOWN' && canSetPrice()) status.append(' ', priceFixLink(modelInput.value.trim(), connSelect.value || undefined));
      if (requestId) await showTimeline(requestId, ac.signal);
    } catch (err) {
      if (isAbortError(err)) {
        status.textContent = 'Stopped.';
      } else {
        status.textContent = describeError(err).message;
      }
      clear(timeline, h('p', { class: 'muted small' }, 'No timeline.'));
    } finally {
      if (running === ac) running = null;
      send.disabled = false;
      stop.disabled = true;
    }
  }

  async function showTimeline(requestId: string, signal: AbortSignal): Promise<void> {
    clear(timeline, h('p', { class: 'muted small' }, 'Reading the request log…'));
    for (let i = 0; i < ROW_POLL_TRIES && !signal.aborted; i++) {
      const row = await endpoints.logByRequestId(requestId, signal).catch(() => null);
      if (row) {
        // A failed answer: the fixes of the connections it failed on, with links to them.
        const message = h('div', { role: 'status' });
        const fixes = failureFixes(row, { signal, message, onDone: () => undefined });
        clear(timeline, renderTimeline(row), fixes, fixes ? message : null);
        return;
      }
      await new Promise((r) => setTimeout(r, ROW_POLL_MS));
    }
    clear(timeline, h('p', { class: 'muted small' }, 'The log row did not arrive.'));
  }

  const connName = (id?: string, provider?: string) => (id ? (connections.find((c) => c.id === id)?.name ?? healthStore.connection(id)?.name ?? 'a deleted connection') : provider || '—');

  function renderTimeline(l: RequestLog): HTMLElement {
    const all: AttemptLog[] = Array.isArray(l.attempts) ? l.attempts : [];
    const attempts = all.filter((a) => a.verdict !== 'excluded');
    const excluded = all.filter((a) => a.verdict === 'excluded');
    const spans = timelineSpans(attempts);
    return h(
      'div',
      { class: 'attempts-detail' },
      h('p', { class: 'small' }, badge(String(l.status), isOkStatus(l.status) ? 'ok' : 'bad'), ` ${attempts.length} attempt${attempts.length === 1 ? '' : 's'} · ${formatDuration(l.latencyMs ?? 0)}`),
      attempts.length
        ? h(
            'ol',
            { class: 'attempt-timeline', 'aria-label': 'Attempt timeline', 'data-testid': 'attempt-timeline' },
            attempts.map((a, i) => {
              const wait = a.verdict === 'wait';
              const tone = wait ? 'wait' : a.status && isOkStatus(a.status) ? 'ok' : 'bad';
              const cont = (a as AttemptLog & { continuedFromChars?: number }).continuedFromChars;
              const label = wait
                ? `waited ${formatDuration(a.latencyMs ?? 0)} for a cooldown`
                : `${connName(a.connectionId, a.provider)}: ${a.verdict ?? ''}${a.status ? ` (${a.status})` : ''} after ${formatDuration(a.latencyMs ?? 0)}${cont ? ` · continued after ${cont} characters` : ''}`;
              return h(
                'li',
                { class: 'tl-step', 'data-testid': 'pg-attempt' },
                h('span', { class: 'tl-label small' }, label, a.code ? [' — ', plainCode(a.code, 'error-type')] : null, a.detail ? h('small', { class: 'muted block' }, a.detail) : null),
                h('span', { class: 'tl-track', 'aria-hidden': 'true' }, h('span', { class: `tl-bar tl-${tone}`, style: `left:${spans[i]!.left}%;width:${spans[i]!.width}%` })),
              );
            }),
          )
        : h('p', { class: 'muted small' }, 'No upstream attempt was made.'),
      excluded.length
        ? h(
            'ul',
            { class: 'small', 'data-testid': 'exclusions' },
            excluded.map((x) => h('li', null, h('strong', null, connName(x.connectionId, x.provider)), ' ', h('code', null, x.model || ''), ' — ', EXCLUSION_TEXT[x.code ?? ''] ?? (sentence(x.code) || 'excluded'))),
          )
        : null,
    );
  }

  void load();
  const replayId = ctx.params.get('replay');
  if (replayId) void loadReplay(replayId);
  return () => running?.abort();
}
