import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, describeEvent, parseLiveEvent, type LiveEvent } from '../../src/lib/sse';
import { eventsUrl, LiveFeed, type EventSourceLike } from '../../src/live';

// Messages exactly as backend/api/events.go writes them.
const HEALTH = '{"circuitBreakers":{"closed":1,"degraded":0,"halfOpen":0,"open":0,"total":1},"connectionHealth":{"coolingDown":1,"soonestRetryAfterMs":119999,"terminal":0,"total":1},"status":"unhealthy"}';
const CONNECTION =
  '{"id":1,"type":"connection","at":"2026-12-02T15:07:54.839590888Z","data":{"backoffLevel":1,"cooldownRemainingMs":119999,"errorCode":"UPSTREAM_RATE_LIMITED","id":"5d20","lastErrorType":"rate_limit","name":"fake","provider":"openai-compatible","rateLimitedUntil":"2026-12-02T15:09:54.839131438Z","status":"cooling_down","terminal":""}}';
const REQUEST =
  '{"id":2,"type":"request","at":"2026-12-02T15:07:54.839702286Z","data":{"attempts":1,"connectionId":"","errorCode":"RATE_LIMITED","latencyMs":1,"model":"openai-compatible/gpt-4o-mini","provider":"","requestId":"98de","status":429,"stream":false}}';

describe('parseLiveEvent', () => {
  const now = () => new Date('2026-12-02T15:00:00Z');
  it('health data is the payload itself', () => {
    const ev = parseLiveEvent('health', HEALTH, now);
    expect(ev).toMatchObject({ type: 'health', id: null, at: '2026-12-02T15:00:00.000Z' });
    expect(ev?.type === 'health' && ev.data.connectionHealth?.coolingDown).toBe(1);
  });
  it('other events unwrap the {id,type,at,data} envelope', () => {
    const ev = parseLiveEvent('connection', CONNECTION, now);
    expect(ev).toMatchObject({ id: 1, type: 'connection', at: '2026-12-02T15:07:54.839590888Z' });
    expect(ev?.type === 'connection' && ev.data.status).toBe('cooling_down');
    const req = parseLiveEvent('request', REQUEST, now);
    expect(req?.type === 'request' && req.data.status).toBe(429);
    expect(parseLiveEvent('settings', '{"id":3,"type":"settings","at":"x","data":{"section":"resilience"}}')?.type).toBe('settings');
    expect(parseLiveEvent('breaker', '{"id":4,"type":"breaker","at":"x","data":{"provider":"openai","state":"OPEN","failures":12}}')?.type).toBe('breaker');
  });
  it('ignores malformed, incomplete and unknown messages', () => {
    expect(parseLiveEvent('health', 'not json')).toBeNull();
    expect(parseLiveEvent('health', '{"circuitBreakers":{}}')).toBeNull();
    expect(parseLiveEvent('connection', '{"id":1,"data":{"status":"healthy"}}')).toBeNull();
    expect(parseLiveEvent('lease', '{"id":1,"data":{}}')).toBeNull();
    expect(parseLiveEvent('request', '[1,2]')).toBeNull();
  });
});

describe('backoffDelay', () => {
  const noJitter = () => 0.5;
  it('doubles from 1 s and caps at 30 s', () => {
    const schedule = [0, 1, 2, 3, 4, 5, 6, 20].map((n) => backoffDelay(n, DEFAULT_BACKOFF, noJitter));
    expect(schedule).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });
  it('jitter stays within ±20 %', () => {
    expect(backoffDelay(2, DEFAULT_BACKOFF, () => 0)).toBe(3200);
    expect(backoffDelay(2, DEFAULT_BACKOFF, () => 0.999999)).toBe(4800);
    expect(backoffDelay(10, DEFAULT_BACKOFF, () => 0.999999)).toBeLessThanOrEqual(36_000);
    expect(backoffDelay(-3, DEFAULT_BACKOFF, noJitter)).toBe(1000);
  });
});

describe('describeEvent', () => {
  it('describes a cooldown with its length and reason', () => {
    const ev = parseLiveEvent('connection', CONNECTION)!;
    expect(describeEvent(ev)).toEqual({ title: 'fake cooling down for 2 min', detail: 'Upstream rate limited', tone: 'warn' }); // words, never the raw code (issue 42)
  });
  it('describes pause and resume of the gateway', () => {
    const paused = parseLiveEvent('gateway', '{"id":5,"type":"gateway","at":"x","data":{"paused":true}}')!;
    expect(describeEvent(paused)).toMatchObject({ title: 'Gateway paused', tone: 'warn' });
    expect(parseLiveEvent('gateway', '{"id":5,"type":"gateway","at":"x","data":{"paused":"yes"}}')).toBeNull();
  });
  it('describes requests and health', () => {
    expect(describeEvent(parseLiveEvent('request', REQUEST)!)).toMatchObject({ title: '429 openai-compatible/gpt-4o-mini', tone: 'bad' });
    expect(describeEvent(parseLiveEvent('health', HEALTH)!)).toMatchObject({ title: 'Gateway unhealthy', detail: '1 cooling down', tone: 'bad' });
  });
});

// ------------------------------------------------------------------ LiveFeed

class FakeSource implements EventSourceLike {
  static all: FakeSource[] = [];
  listeners = new Map<string, Array<(ev: MessageEvent<string>) => void>>();
  onopen: ((ev: Event) => void) | null = null;
  onerror: ((ev: Event) => void) | null = null;
  closed = false;
  constructor(public url: string) {
    FakeSource.all.push(this);
  }
  addEventListener(type: string, fn: (ev: MessageEvent<string>) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close(): void {
    this.closed = true;
  }
  open(): void {
    this.onopen?.(new Event('open'));
  }
  fail(): void {
    this.onerror?.(new Event('error'));
  }
  emit(type: string, data: string): void {
    for (const fn of this.listeners.get(type) ?? []) fn({ data } as MessageEvent<string>);
  }
}

function makeFeed(token: string | null = 'tok/en') {
  FakeSource.all = [];
  const timers: Array<{ fn: () => void; ms: number; cleared: boolean }> = [];
  const failures: number[] = [];
  const feed = new LiveFeed({
    url: () => eventsUrl(token),
    createSource: (url) => new FakeSource(url),
    setTimer: (fn, ms) => {
      const t = { fn, ms, cleared: false };
      timers.push(t);
      return t;
    },
    clearTimer: (t) => {
      (t as { cleared: boolean }).cleared = true;
    },
    random: () => 0.5,
    now: () => 0,
    onConnectFailure: (n) => failures.push(n),
  });
  const fire = () => {
    const t = timers.filter((x) => !x.cleared).pop()!;
    t.cleared = true;
    t.fn();
  };
  return { feed, timers, fire, failures };
}

describe('LiveFeed', () => {
  afterEach(() => vi.restoreAllMocks());

  it('connects with the token in the query string', () => {
    const { feed } = makeFeed();
    feed.start();
    expect(FakeSource.all[0]?.url).toBe('/api/events?token=tok%2Fen');
    expect(feed.getStatus().state).toBe('connecting');
    FakeSource.all[0]!.open();
    expect(feed.getStatus()).toEqual({ state: 'open', failures: 0, retryAt: null });
  });

  it('does nothing while signed out', () => {
    const { feed } = makeFeed(null);
    feed.start();
    expect(FakeSource.all).toHaveLength(0);
    expect(feed.getStatus().state).toBe('idle');
  });

  it('reconnects with a growing backoff and resets it after a successful open', () => {
    const { feed, timers, fire, failures } = makeFeed();
    feed.start();
    FakeSource.all[0]!.fail();
    expect(FakeSource.all[0]!.closed).toBe(true);
    expect(feed.getStatus()).toMatchObject({ state: 'reconnecting', failures: 1, retryAt: 1000 });
    fire();
    FakeSource.all[1]!.fail();
    fire();
    FakeSource.all[2]!.fail();
    expect(timers.map((t) => t.ms)).toEqual([1000, 2000, 4000]);
    expect(failures).toEqual([1, 2, 3]); // each connect that never opened is reported
    fire();
    FakeSource.all[3]!.open();
    FakeSource.all[3]!.fail(); // dropped after being open: not a connect failure
    expect(timers.at(-1)?.ms).toBe(1000);
    expect(failures).toEqual([1, 2, 3]);
  });

  it('dispatches typed events to subscribers until they unsubscribe', () => {
    const { feed } = makeFeed();
    const seen: string[] = [];
    const all: LiveEvent[] = [];
    const off = feed.subscribe('connection', (ev) => seen.push(ev.data.status ?? ''));
    feed.subscribe('*', (ev) => all.push(ev));
    feed.start();
    const src = FakeSource.all[0]!;
    src.open();
    src.emit('connection', CONNECTION);
    src.emit('request', REQUEST);
    src.emit('connection', 'garbage');
    off();
    src.emit('connection', CONNECTION);
    expect(seen).toEqual(['cooling_down']);
    expect(all.map((e) => e.type)).toEqual(['connection', 'request', 'connection']);
  });

  it('keeps recent events newest first, health only when its status changes', () => {
    const { feed } = makeFeed();
    feed.start();
    const src = FakeSource.all[0]!;
    src.emit('health', HEALTH);
    src.emit('health', HEALTH.replace('119999', '117000'));
    src.emit('connection', CONNECTION);
    src.emit('health', HEALTH.replace('unhealthy', 'healthy'));
    expect(feed.recent().map((e) => e.type)).toEqual(['health', 'connection', 'health']);
    expect(feed.latestHealth()?.data.status).toBe('healthy');
  });

  it('stop closes the stream, cancels the retry and ignores late messages', () => {
    const { feed, timers } = makeFeed();
    const seen: LiveEvent[] = [];
    feed.subscribe('*', (e) => seen.push(e));
    feed.start();
    const first = FakeSource.all[0]!;
    first.fail();
    feed.stop();
    expect(timers[0]?.cleared).toBe(true);
    expect(feed.getStatus().state).toBe('idle');
    feed.start(); // connects at once, no pending retry
    first.emit('request', REQUEST); // the old, closed source
    expect(seen).toHaveLength(0);
    expect(FakeSource.all).toHaveLength(2);
    FakeSource.all[1]!.emit('request', REQUEST);
    expect(seen).toHaveLength(1);
  });
});

describe('subscription events', () => {
  const env = (data: object) => JSON.stringify({ id: 9, type: 'subscription', at: '2026-01-01T00:00:00Z', data });
  it('parses and describes imports, refreshes and wall transitions', () => {
    const names = new Map([['c1', 'Claude Code (me@x)']]);
    const imp = parseLiveEvent('subscription', env({ id: 'c1', imported: 'claude-code', created: true }))!;
    expect(describeEvent(imp, names)).toEqual({ title: 'Imported claude-code login', detail: 'Claude Code (me@x)', tone: 'ok' });
    const ref = parseLiveEvent('subscription', env({ id: 'c1', tokenRefreshed: true }))!;
    expect(describeEvent(ref, names).title).toBe('Token refreshed: Claude Code (me@x)');
    const wall = parseLiveEvent('subscription', env({ id: 'c1', wall: 'max_wait' }))!;
    expect(describeEvent(wall, names)).toMatchObject({ title: 'Claude Code (me@x): usage wall max wait', tone: 'warn' });
  });
  it('refuses a subscription event without a connection id', () => {
    expect(parseLiveEvent('subscription', env({ tokenRefreshed: true }))).toBeNull();
  });
});
