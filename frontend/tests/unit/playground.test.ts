import { describe, expect, it } from 'vitest';
import { buildRequest, curlCommand, lineDiff, pretty, sseData, textOf } from '../../src/lib/playground';

describe('playground helpers', () => {
  it('builds each client format', () => {
    expect(buildRequest('chat', 'm', 'hi', true)).toEqual({ path: '/v1/chat/completions', body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(buildRequest('gemini', 'g/x', 'hi', true).path).toBe('/v1beta/models/g%2Fx:streamGenerateContent?alt=sse');
    expect(buildRequest('messages', 'm', 'hi', false).body['max_tokens']).toBe(1024);
  });
  it('reads the text of every format', () => {
    expect(textOf('chat', { choices: [{ delta: { content: 'a' } }] })).toBe('a');
    expect(textOf('messages', { type: 'content_block_delta', delta: { text: 'b' } })).toBe('b');
    expect(textOf('responses', { type: 'response.output_text.delta', delta: 'c' })).toBe('c');
    expect(textOf('gemini', { candidates: [{ content: { parts: [{ text: 'd' }] } }] })).toBe('d');
  });
  it('splits SSE keeping the unfinished tail', () => {
    expect(sseData('event: x\ndata: {"a":1}\n\ndata: [DONE]\n\ndata: {"b"')).toEqual({ data: ['{"a":1}', '[DONE]'], rest: 'data: {"b"' });
  });
  it('masks nothing it is not given and quotes the body', () => {
    const c = curlCommand('http://h', 'chat', { path: '/v1/chat/completions', body: { q: "it's" } }, 'sk-omni-Ab12…', true);
    expect(c).toContain(`-H 'Authorization: Bearer sk-omni-Ab12…'`);
    expect(c).toContain(`-d '{"q":"it'\\''s"}'`);
  });
  it('diffs lines', () => {
    expect(lineDiff('a\nb\nc', 'a\nx\nc')).toEqual([
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'x' },
      { op: ' ', text: 'c' },
    ]);
    expect(pretty('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(pretty('data: x')).toBe('data: x');
  });
});
