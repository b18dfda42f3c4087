// Hash routing (#/overview, #/connections, …). Hash routes need no server
// support beyond serving index.html at /dashboard/, and work the same in the
// Wails window.

export interface ViewContext {
  /** Aborted when the person leaves the page or signs out: stop updating the DOM. */
  signal: AbortSignal;
  /** Query parameters of the route fragment, e.g. `#/logs?status=error`. */
  params: URLSearchParams;
}

/** A view renders into `root`; it may return a cleanup function (timers, live subscriptions). */
export type View = (root: HTMLElement, ctx: ViewContext) => void | (() => void);

export interface Route {
  path: string; // "/connections"
  title: string; // nav label and document title
  view: View;
  /** A nav heading the page is listed under ("Resilience"); consecutive pages of a group are shown together. */
  group?: string;
  /** The least role that sees the page (the API refuses the rest anyway); prefer `needs`. */
  role?: 'operator' | 'admin';
  /**
   * The route the page cannot work without ("GET /api/users"): a role the
   * gateway's table refuses it does not see the page in the nav, and a link
   * to it says why instead of loading into a 403.
   */
  needs?: `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} /${string}`;
}

export interface ParsedHash {
  path: string;
  params: URLSearchParams;
}

/** "#/logs?status=error" → { path: "/logs", params: status=error }; anything else → "/". */
export function parseHash(hash: string): ParsedHash {
  const raw = hash.replace(/^#/, '');
  const q = raw.search(/[?&]/);
  const pathPart = q >= 0 ? raw.slice(0, q) : raw;
  const query = q >= 0 ? raw.slice(q + 1) : '';
  let path = '/';
  if (pathPart.startsWith('/')) {
    try {
      path = decodeURIComponent(pathPart);
    } catch {
      path = pathPart;
    }
    path = path.replace(/\/+$/, '') || '/';
  }
  return { path, params: new URLSearchParams(query) };
}

export function currentPath(): string {
  return parseHash(location.hash).path;
}

export function href(path: string, params?: Record<string, string>): string {
  const q = params ? new URLSearchParams(params).toString() : '';
  return `#${path}${q ? `?${q}` : ''}`;
}

export function findRoute(routes: readonly Route[], path: string): Route | undefined {
  return routes.find((r) => r.path === path);
}
