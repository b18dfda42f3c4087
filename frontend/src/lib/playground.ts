// Pure helpers of the playground and the body viewer: the request each
// client format sends, the text its answer carries (streamed or not), the
// equivalent curl command (key masked), and a line diff.

export type ClientFormat = 'chat' | 'messages' | 'responses' | 'gemini';

export const FORMATS: ReadonlyArray<{ value: ClientFormat; label: string }> = [
  { value: 'chat', label: 'OpenAI Chat (/v1/chat/completions)' },
  { value: 'messages', label: 'Anthropic Messages (/v1/messages)' },
  { value: 'responses', label: 'OpenAI Responses (/v1/responses)' },
  { value: 'gemini', label: 'Gemini native (/v1beta/models)' },
];

export interface PlaygroundRequest {
  /** The client route, e.g. "/v1/chat/completions" (with Gemini's ?alt=sse). */
  path: string;
  body: Record<string, unknown>;
}

/**
 * A logged request to replay (issue 42): its client format, the messages
 * before its last user turn (in that format's shape), the last user turn's
 * text as the prompt, and the fields besides the messages the Playground
 * keeps (a system prompt, max_tokens, instructions).
 */
export interface ReplayPrefill {
  format: ClientFormat;
  history: unknown[];
  prompt: string;
  extra: Record<string, unknown>;
}

/** The log's client format names (backend/translate) → the Playground's. */
const REPLAY_FORMATS: Record<string, ClientFormat> = { openai: 'chat', anthropic: 'messages', responses: 'responses', gemini: 'gemini' };

/** The text of a message's content when it is only text (a string or text parts); null when it holds anything else (an image, a tool call). */
function textOnly(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  let out = '';
  for (const p of content) {
    if (!p || typeof p !== 'object') return null;
    const part = p as Record<string, unknown>;
    const kind = part['type'];
    if ((kind === undefined || kind === 'text' || kind === 'input_text') && typeof part['text'] === 'string') out += part['text'];
    else return null;
  }
  return out;
}

/** The replay of a captured client request body (GET /api/logs/{id}/bodies clientRequest); null when the format is not one the Playground sends or the body does not read (cut, not JSON). */
export function replayOf(clientFormat: string, clientRequest: string): ReplayPrefill | null {
  const format = REPLAY_FORMATS[clientFormat];
  if (!format) return null;
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(clientRequest);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    body = parsed as Record<string, unknown>;
  } catch {
    return null;
  }
  const keep = (...names: string[]) => Object.fromEntries(names.filter((n) => body[n] !== undefined).map((n) => [n, body[n]]));
  const list = format === 'gemini' ? body['contents'] : format === 'responses' ? body['input'] : body['messages'];
  const extra = format === 'messages' ? keep('system', 'max_tokens') : format === 'responses' ? keep('instructions') : format === 'gemini' ? keep('systemInstruction') : {};
  if (format === 'responses' && typeof list === 'string') return { format, history: [], prompt: list, extra };
  if (!Array.isArray(list)) return null;
  const last = list.at(-1) as Record<string, unknown> | undefined;
  const role = last?.['role'];
  const text = last && role === 'user' ? textOnly(format === 'gemini' ? last['parts'] : last['content']) : null;
  if (text === null) return { format, history: [...list], prompt: '', extra };
  return { format, history: list.slice(0, -1), prompt: text, extra };
}

/** The request a client of format f sends for one user prompt; with a replay, after its earlier messages and with its other fields. An empty prompt after a replayed history adds no turn. */
export function buildRequest(f: ClientFormat, model: string, prompt: string, stream: boolean, replay?: ReplayPrefill | null): PlaygroundRequest {
  const r = replay && replay.format === f ? replay : null;
  const history = r?.history ?? [];
  const turn = r && history.length && prompt === '' ? [] : null;
  const messages = [...history, ...(turn ?? [{ role: 'user', content: prompt }])];
  switch (f) {
    case 'chat':
      return { path: '/v1/chat/completions', body: { model, stream, messages } };
    case 'messages':
      return { path: '/v1/messages', body: { model, max_tokens: 1024, ...r?.extra, stream, messages } };
    case 'responses':
      return { path: '/v1/responses', body: { model, ...r?.extra, stream, input: history.length ? messages : prompt } };
    case 'gemini':
      return {
        path: `/v1beta/models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        body: { ...r?.extra, contents: [...history, ...(turn ?? [{ role: 'user', parts: [{ text: prompt }] }])] },
      };
  }
}

/** The text one SSE data payload (or a whole JSON answer) of format f adds. */
export function textOf(f: ClientFormat, data: unknown): string {
  if (!data || typeof data !== 'object') return '';
  const d = data as Record<string, any>;
  switch (f) {
    case 'chat': {
      const c = d['choices']?.[0];
      return String(c?.delta?.content ?? c?.message?.content ?? '');
    }
    case 'messages':
      if (d['type'] === 'content_block_delta') return String(d['delta']?.text ?? '');
      if (Array.isArray(d['content'])) return d['content'].map((b: any) => (b?.type === 'text' ? String(b.text ?? '') : '')).join('');
      return '';
    case 'responses':
      if (d['type'] === 'response.output_text.delta') return String(d['delta'] ?? '');
      if (Array.isArray(d['output']))
        return d['output']
          .flatMap((o: any) => (Array.isArray(o?.content) ? o.content : []))
          .map((c: any) => (c?.type === 'output_text' ? String(c.text ?? '') : ''))
          .join('');
      return '';
    case 'gemini': {
      const parts = d['candidates']?.[0]?.content?.parts;
      return Array.isArray(parts) ? parts.map((p: any) => String(p?.text ?? '')).join('') : '';
    }
  }
}

/** Splits an SSE buffer into complete events' data payloads; rest is the unfinished tail. */
export function sseData(buf: string): { data: string[]; rest: string } {
  const norm = buf.replace(/\r\n/g, '\n');
  const cut = norm.lastIndexOf('\n\n');
  if (cut < 0) return { data: [], rest: norm };
  const data: string[] = [];
  for (const block of norm.slice(0, cut).split('\n\n')) {
    const lines = block.split('\n').filter((l) => l.startsWith('data:'));
    if (lines.length) data.push(lines.map((l) => l.slice(5).replace(/^ /, '')).join('\n'));
  }
  return { data, rest: norm.slice(cut + 2) };
}

/** A single-quoted shell word. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The curl command that sends the same request straight to /v1 with the (masked) key. */
export function curlCommand(base: string, f: ClientFormat, req: PlaygroundRequest, maskedKey: string, stream: boolean): string {
  const auth =
    f === 'messages'
      ? [`-H ${shellQuote(`x-api-key: ${maskedKey}`)}`, `-H 'anthropic-version: 2023-06-01'`]
      : f === 'gemini'
        ? [`-H ${shellQuote(`x-goog-api-key: ${maskedKey}`)}`]
        : [`-H ${shellQuote(`Authorization: Bearer ${maskedKey}`)}`];
  return [`curl${stream ? ' -N' : ''} ${shellQuote(base + req.path)}`, ...auth, `-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(req.body))}`].join(
    ' \\\n  ',
  );
}

/** A body as readable text: indented JSON when it is JSON, else as is (SSE kept). */
export function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

export type DiffLine = { op: ' ' | '-' | '+'; text: string };

/** A line diff of a and b (longest common subsequence; large inputs fall back to a plain before/after). */
export function lineDiff(a: string, b: string, maxCells = 4_000_000): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length * y.length > maxCells) return [...x.map((t) => ({ op: '-' as const, text: t })), ...y.map((t) => ({ op: '+' as const, text: t }))];
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ op: ' ', text: x[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: '-', text: x[i++]! });
    else out.push({ op: '+', text: y[j++]! });
  }
  while (i < n) out.push({ op: '-', text: x[i++]! });
  while (j < m) out.push({ op: '+', text: y[j++]! });
  return out;
}
