// The one live connection to GET /api/events, shared by every page and the
// header. Pages subscribe to event types and get an unsubscribe function to
// call in their cleanup; the stream reconnects with backoff when it drops.
//
// EventSource cannot send headers, so the management token goes in the query
// string (?token=…), which the gateway accepts for this route only.

import { getSession, getToken } from './api';
import { backoffDelay, describeEvent, LIVE_EVENT_TYPES, parseLiveEvent, type LiveEvent, type LiveEventType } from './lib/sse';

export type LiveState = 'idle' | 'connecting' | 'open' | 'reconnecting';

export interface LiveStatus {
  state: LiveState;
  /** Consecutive failed connects since the last successful open. */
  failures: number;
  /** When reconnecting: the epoch ms of the next try. */
  retryAt: number | null;
}

type EventOf<T extends LiveEventType> = Extract<LiveEvent, { type: T }>;
type Listener = (ev: LiveEvent) => void;

/** The part of EventSource the feed uses (a fake in unit tests). */
export interface EventSourceLike {
  addEventListener(type: string, fn: (ev: MessageEvent<string>) => void): void;
  close(): void;
  onopen: ((ev: Event) => void) | null;
  onerror: ((ev: Event) => void) | null;
}

export interface LiveFeedOptions {
  /** The stream URL, or null when signed out. */
  url: () => string | null;
  createSource?: (url: string) => EventSourceLike;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
  now?: () => number;
  random?: () => number;
  /** How many recent events to keep for pages opened later (the Overview feed). */
  historySize?: number;
  /**
   * Called after a connect fails before ever opening, so the app can find out
   * why (e.g. a rejected token: EventSource does not expose the HTTP status).
   */
  onConnectFailure?: (failures: number) => void;
}

export class LiveFeed {
  private readonly opts: Required<Omit<LiveFeedOptions, 'onConnectFailure'>>;
  private onConnectFailure: ((failures: number) => void) | undefined;
  private source: EventSourceLike | null = null;
  private timer: unknown = null;
  private opened = false;
  private listeners = new Map<LiveEventType | '*', Set<Listener>>();
  private statusListeners = new Set<(s: LiveStatus) => void>();
  private history: LiveEvent[] = [];
  private status: LiveStatus = { state: 'idle', failures: 0, retryAt: null };
  private lastHealth: EventOf<'health'> | null = null;

  constructor(opts: LiveFeedOptions) {
    this.opts = {
      createSource: (url) => (wailsRuntime() ? new WailsSource(wailsRuntime()!) : (new EventSource(url) as unknown as EventSourceLike)),
      setTimer: (fn, ms) => window.setTimeout(fn, ms),
      clearTimer: (h) => window.clearTimeout(h as number),
      now: () => Date.now(),
      random: Math.random,
      historySize: 50,
      ...opts,
    };
    this.onConnectFailure = opts.onConnectFailure;
  }

  setConnectFailureHandler(fn: (failures: number) => void): void {
    this.onConnectFailure = fn;
  }

  /** Opens the stream (no-op when already open or connecting). */
  start(): void {
    if (this.source || this.timer != null) return;
    this.connect();
  }

  /** Closes the stream and cancels any reconnect (sign-out). Keeps subscribers. */
  stop(): void {
    this.cancelTimer();
    this.closeSource();
    this.history = [];
    this.lastHealth = null;
    this.setStatus({ state: 'idle', failures: 0, retryAt: null });
  }

  /** Drops the current stream and connects again now (e.g. a new token). */
  restart(): void {
    this.stop();
    this.start();
  }

  subscribe<T extends LiveEventType>(type: T, fn: (ev: EventOf<T>) => void): () => void;
  subscribe(type: '*', fn: Listener): () => void;
  subscribe(type: LiveEventType | '*', fn: Listener): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** Calls fn now and on every status change. */
  onStatus(fn: (s: LiveStatus) => void): () => void {
    this.statusListeners.add(fn);
    fn(this.status);
    return () => this.statusListeners.delete(fn);
  }

  getStatus(): LiveStatus {
    return this.status;
  }

  /** Recent events, newest first. */
  recent(): LiveEvent[] {
    return [...this.history];
  }

  /** The last health event received on this stream, if any. */
  latestHealth(): EventOf<'health'> | null {
    return this.lastHealth;
  }

  /** Feeds one event to the subscribers (used by the stream; public for tests). */
  dispatch(ev: LiveEvent): void {
    if (ev.type === 'health') this.lastHealth = ev;
    this.remember(ev);
    for (const key of [ev.type, '*'] as const) {
      for (const fn of [...(this.listeners.get(key) ?? [])]) {
        try {
          fn(ev);
        } catch (err) {
          // One broken page must not stop the others from updating.
          console.warn('live event listener failed', err);
        }
      }
    }
  }

  private remember(ev: LiveEvent): void {
    // Health repeats every few seconds while a countdown runs; keep only
    // changes of what the feed says (the status, or the split of connections
    // the Overview's tiles show: the newest health line always agrees with them).
    if (ev.type === 'health') {
      const prev = this.history.find((e) => e.type === 'health');
      if (prev && prev.type === 'health' && describeEvent(prev).title === describeEvent(ev).title && describeEvent(prev).detail === describeEvent(ev).detail) return;
    }
    this.history.unshift(ev);
    if (this.history.length > this.opts.historySize) this.history.length = this.opts.historySize;
  }

  private connect(): void {
    this.timer = null;
    const url = this.opts.url();
    if (!url) {
      this.setStatus({ state: 'idle', failures: 0, retryAt: null });
      return;
    }
    this.opened = false;
    this.setStatus({ state: 'connecting', failures: this.status.failures, retryAt: null });
    let src: EventSourceLike;
    try {
      src = this.opts.createSource(url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.source = src;
    src.onopen = () => {
      if (this.source !== src) return;
      this.opened = true;
      this.setStatus({ state: 'open', failures: 0, retryAt: null });
    };
    src.onerror = () => {
      if (this.source !== src) return;
      // EventSource would retry on its own at a fixed pace (and not at all after
      // an HTTP error); close it and retry with backoff instead.
      const neverOpened = !this.opened;
      this.closeSource();
      this.scheduleReconnect();
      if (neverOpened) this.onConnectFailure?.(this.status.failures);
    };
    for (const type of LIVE_EVENT_TYPES) {
      src.addEventListener(type, (msg) => {
        if (this.source !== src) return;
        const ev = parseLiveEvent(type, msg.data);
        if (ev) this.dispatch(ev);
      });
    }
  }

  private scheduleReconnect(): void {
    const failures = this.status.failures + 1;
    const delay = backoffDelay(failures - 1, undefined, this.opts.random);
    this.setStatus({ state: 'reconnecting', failures, retryAt: this.opts.now() + delay });
    this.cancelTimer();
    this.timer = this.opts.setTimer(() => this.connect(), delay);
  }

  private closeSource(): void {
    const src = this.source;
    this.source = null;
    if (src) {
      src.onopen = null;
      src.onerror = null;
      src.close();
    }
  }

  private cancelTimer(): void {
    if (this.timer != null) this.opts.clearTimer(this.timer);
    this.timer = null;
  }

  private setStatus(s: LiveStatus): void {
    this.status = s;
    for (const fn of [...this.statusListeners]) fn(s);
  }
}

/** Builds the stream URL for a token: relative, so it works under /dashboard/ (the window uses WailsSource). */
export function eventsUrl(token: string | null): string | null {
  return token ? `/api/events?token=${encodeURIComponent(token)}` : null;
}

/** The part of the Wails runtime the desktop window's stream uses. */
export interface WailsRuntime {
  EventsOn(name: string, fn: (...args: unknown[]) => void): () => void;
}

/** The Wails runtime, present only inside the desktop window. */
function wailsRuntime(): WailsRuntime | null {
  const rt = (globalThis as { runtime?: Partial<WailsRuntime> }).runtime;
  return rt && typeof rt.EventsOn === 'function' ? (rt as WailsRuntime) : null;
}

/**
 * The desktop window's event source: its wails:// asset server cannot stream
 * SSE, so the app relays the same events (type, SSE data) as Wails events.
 */
export class WailsSource implements EventSourceLike {
  onopen: ((ev: Event) => void) | null = null;
  onerror: ((ev: Event) => void) | null = null;
  private listeners = new Map<string, Set<(ev: MessageEvent<string>) => void>>();
  private off: (() => void) | null;

  constructor(rt: WailsRuntime, defer: (fn: () => void) => void = (fn) => queueMicrotask(fn)) {
    this.off = rt.EventsOn('omniroute:sse', (type, data) => {
      const fns = this.listeners.get(String(type));
      if (!fns) return;
      const ev = { data: String(data) } as MessageEvent<string>;
      for (const fn of [...fns]) fn(ev);
    });
    defer(() => this.onopen?.(new Event('open')));
  }

  addEventListener(type: string, fn: (ev: MessageEvent<string>) => void): void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(fn);
  }

  close(): void {
    this.off?.();
    this.off = null;
    this.listeners.clear();
  }
}

/** The dashboard's shared stream: started by main.ts after sign-in, stopped at sign-out. */
// A signed-in user's stream carries the session cookie (same origin), no token.
export const live = new LiveFeed({ url: () => eventsUrl(getToken()) ?? (getSession()?.kind === 'user' ? '/api/events' : null) });
