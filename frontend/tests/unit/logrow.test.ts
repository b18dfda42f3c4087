import { describe, expect, it } from 'vitest';
import type { RequestLog } from '../../src/api';
import { costCell, keyCell, replayHref, tokensCell } from '../../src/lib/logrow';
import { buildRequest, replayOf } from '../../src/lib/playground';
import { replayLink, usageCells } from '../../src/views/logs';

const names = new Map([['k1', 'Work laptop']]);
const row = (over: Partial<RequestLog> = {}): RequestLog => ({
  id: 1,
  requestId: 'req-1',
  status: 200,
  model: 'lab/gpt-4o-mini',
  apiKeyId: 'k1',
  promptTokens: 1200,
  completionTokens: 85,
  cachedTokens: 1000,
  costUsd: 0.00123,
  savedUsd: 0,
  ...over,
});

describe('Logs row: key, tokens, cost (issue 42 item 7)', () => {
  it('names the key, never more than an id prefix for a deleted one', () => {
    expect(keyCell('k1', names).text).toBe('Work laptop');
    const gone = keyCell('0123456789abcdef', names);
    expect(gone.text).toBe('01234567…');
    expect(gone.title).toContain('no longer');
    expect(keyCell(undefined, names).text).toBe('—');
  });
  it('shows tokens in → out, cached in the tooltip', () => {
    expect(tokensCell(row())).toEqual({ text: '1,200 → 85', title: '1,200 tokens in (1,000 cached), 85 out' });
    expect(tokensCell(row({ promptTokens: 0, completionTokens: 0, cachedTokens: 0 })).text).toBe('—');
  });
  it('shows the cost, unknown prices and flat-rate savings apart', () => {
    expect(costCell(row()).text).toBe('$0.0012');
    expect(costCell(row({ costUsd: 0.00002 })).text).toBe('<$0.0001');
    expect(costCell(row({ costUsd: 0, savedUsd: 0.5 }))).toEqual({ text: '$0', title: 'Flat-rate connection: $0.5000 at API prices' });
    expect(costCell(row({ costUsd: null })).title).toContain('Price unknown');
    expect(costCell(row({ costUsd: null, status: 503 })).title).toContain('Nothing was served');
    expect(costCell(row({ costUsd: 12.5 })).text).toBe('$12.50');
  });
  it('renders the three cells of a row, and placeholders for a row announced live', () => {
    const cells = usageCells(row(), names);
    expect(cells.map((c) => c.tagName)).toEqual(['TD', 'TD', 'TD']);
    expect(cells.map((c) => c.textContent)).toEqual(['Work laptop', '1,200 → 85', '$0.0012']);
    expect(cells.map((c) => c.dataset['testid'])).toEqual(['log-key', 'log-tokens', 'log-cost']);
    expect(cells[0]!.outerHTML).not.toContain('sk-omni');
    expect(usageCells(row(), names, true).map((c) => c.textContent)).toEqual(['…', '…', '…']);
  });
  it('links a row to the Playground with its model, and its request when its body was captured', () => {
    expect(replayHref(row())).toBe('#/playground?model=lab%2Fgpt-4o-mini');
    expect(replayHref(row({ hasBodies: true }))).toBe('#/playground?model=lab%2Fgpt-4o-mini&replay=req-1');
    expect(replayHref(row({ model: '' }))).toBeNull();
    const a = replayLink(row({ hasBodies: true }))!;
    expect(a.tagName).toBe('A');
    expect(a.getAttribute('href')).toBe('#/playground?model=lab%2Fgpt-4o-mini&replay=req-1');
    expect(a.textContent).toBe('Replay');
    expect(replayLink(row({ model: '' }))).toBeNull();
  });
});

describe('Playground replay of a logged request', () => {
  it('takes the last user turn as the prompt and sends the earlier messages before it', () => {
    const body = JSON.stringify({
      model: 'x',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'second' }] },
      ],
    });
    const r = replayOf('openai', body)!;
    expect(r.format).toBe('chat');
    expect(r.prompt).toBe('second');
    expect(r.history).toHaveLength(3);
    const req = buildRequest('chat', 'lab/m', r.prompt, false, r);
    expect((req.body['messages'] as unknown[]).length).toBe(4);
    expect((req.body['messages'] as Array<{ content: string }>)[3]!.content).toBe('second');
    // Another format: the prompt alone.
    expect(buildRequest('messages', 'lab/m', 'second', false, r).body['messages']).toEqual([{ role: 'user', content: 'second' }]);
  });
  it('keeps Anthropic system and max_tokens, Gemini contents, Responses input', () => {
    const a = replayOf('anthropic', JSON.stringify({ model: 'x', system: 'sys', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }))!;
    expect(buildRequest('messages', 'm', a.prompt, true, a).body).toEqual({ model: 'm', max_tokens: 50, system: 'sys', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const g = replayOf('gemini', JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a' }] }, { role: 'model', parts: [{ text: 'b' }] }, { role: 'user', parts: [{ text: 'c' }] }] }))!;
    expect(g.prompt).toBe('c');
    expect((buildRequest('gemini', 'm', g.prompt, false, g).body['contents'] as unknown[]).length).toBe(3);
    expect(replayOf('responses', JSON.stringify({ model: 'x', input: 'just this' }))).toEqual({ format: 'responses', history: [], prompt: 'just this', extra: {} });
  });
  it('keeps a last turn that is not plain text whole, and sends no empty turn after it', () => {
    const img = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:…' } }] };
    const r = replayOf('openai', JSON.stringify({ messages: [img] }))!;
    expect(r.prompt).toBe('');
    expect(buildRequest('chat', 'm', '', false, r).body['messages']).toEqual([img]);
  });
  it('gives up on a body it cannot read or a format it does not send', () => {
    expect(replayOf('openai', '{"messages": [')).toBeNull(); // cut when captured
    expect(replayOf('ollama-chat', '{"messages": []}')).toBeNull();
    expect(replayOf('openai', '[]')).toBeNull();
  });
});
