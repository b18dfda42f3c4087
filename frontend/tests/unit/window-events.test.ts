import { describe, expect, it } from 'vitest';
import { eventsUrl } from '../../src/live';

describe('event stream URL', () => {
  it('is relative, with the token', () => {
    expect(eventsUrl('a b')).toBe('/api/events?token=a%20b');
    expect(eventsUrl(null)).toBeNull();
  });
});

import { WailsSource, type WailsRuntime } from '../../src/live';

describe('desktop window event source', () => {
  it('relays Wails events as SSE messages and unsubscribes on close', () => {
    let handler: ((...args: unknown[]) => void) | null = null;
    let offCalls = 0;
    const rt: WailsRuntime = {
      EventsOn: (_name, fn) => {
        handler = fn;
        return () => offCalls++;
      },
    };
    const opened: string[] = [];
    const src = new WailsSource(rt, (fn) => fn());
    src.onopen = () => opened.push('open');
    const got: string[] = [];
    src.addEventListener('breaker', (ev) => got.push(ev.data));
    handler!('breaker', '{"type":"breaker"}');
    handler!('connection', '{"ignored":true}');
    expect(got).toEqual(['{"type":"breaker"}']);
    src.close();
    expect(offCalls).toBe(1);
  });
});
