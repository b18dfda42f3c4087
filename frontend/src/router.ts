// Hash routing (#/connections, #/keys). Hash routes need no server support
// beyond serving index.html at /dashboard/, and work the same in the Wails
// window.

export interface ViewContext {
  /** Aborted when the person leaves the page or signs out: stop updating the DOM. */
  signal: AbortSignal;
}

/** A view renders into `root`; it may return a cleanup function (timers etc.). */
export type View = (root: HTMLElement, ctx: ViewContext) => void | (() => void);

export interface Route {
  path: string; // "/connections"
  title: string; // nav label and document title
  view: View;
}

export function currentPath(): string {
  const hash = location.hash.replace(/^#/, '');
  const path = hash.split(/[?&]/)[0] ?? '';
  return path.startsWith('/') ? path.replace(/\/+$/, '') || '/' : '/';
}

export function href(path: string): string {
  return `#${path}`;
}

export function findRoute(routes: Route[], path: string): Route | undefined {
  return routes.find((r) => r.path === path);
}
