// Light / dark theme: follows prefers-color-scheme ("auto") unless the person
// picked one with the header toggle; the choice is kept in localStorage.
// style.css reads <html data-theme="light|dark">; no attribute means auto.

export type ThemePref = 'auto' | 'light' | 'dark';

export const THEME_KEY = 'omniroute.theme';

const ORDER: readonly ThemePref[] = ['auto', 'light', 'dark'];

export function isThemePref(v: unknown): v is ThemePref {
  return typeof v === 'string' && (ORDER as readonly string[]).includes(v);
}

export function loadTheme(storage: Pick<Storage, 'getItem'> | null = safeStorage()): ThemePref {
  try {
    const v = storage?.getItem(THEME_KEY);
    return isThemePref(v) ? v : 'auto';
  } catch {
    return 'auto';
  }
}

export function saveTheme(pref: ThemePref, storage: Pick<Storage, 'setItem' | 'removeItem'> | null = safeStorage()): void {
  try {
    if (pref === 'auto') storage?.removeItem(THEME_KEY);
    else storage?.setItem(THEME_KEY, pref);
  } catch {
    /* not persisted; still applied for this page */
  }
}

/** The toggle cycles auto → light → dark → auto. */
export function nextTheme(pref: ThemePref): ThemePref {
  return ORDER[(ORDER.indexOf(pref) + 1) % ORDER.length] ?? 'auto';
}

export function applyTheme(pref: ThemePref, root: HTMLElement = document.documentElement): void {
  if (pref === 'auto') root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', pref);
}

/** What the page actually shows, for labels: the preference or, on auto, the system's. */
export function effectiveTheme(pref: ThemePref, prefersDark: boolean): 'light' | 'dark' {
  return pref === 'auto' ? (prefersDark ? 'dark' : 'light') : pref;
}

function safeStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
