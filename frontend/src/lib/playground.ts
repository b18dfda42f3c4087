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

/** The request a client of format f sends for one user prompt. */
export function buildRequest(f: ClientFormat, model: string, prompt: string, stream: boolean): PlaygroundRequest {
  const messages = [{ role: 'user', content: prompt }];
  switch (f) {
    case 'chat':
      return { path: '/v1/chat/completions', body: { model, stream, messages } };
    case 'messages':
      return { path: '/v1/messages', body: { model, max_tokens: 1024, stream, messages } };
    case 'responses':
      return { path: '/v1/responses', body: { model, stream, input: prompt } };
    case 'gemini':
      return {
        path: `/v1beta/models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        body: { contents: [{ role: 'user', parts: [{ text: prompt }] }] },
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
