import { describe, expect, it } from 'vitest';
import { findRoute, href, parseHash, type Route } from '../../src/router';
import { applyTheme, effectiveTheme, loadTheme, nextTheme, saveTheme, THEME_KEY } from '../../src/theme';
import { endpointUrl } from '../../src/views/overview';
import { filterLogs, isOkStatus } from '../../src/views/logs';
import type { RequestLog } from '../../src/api';

describe('router', () => {
  it('parses the path and query of the fragment', () => {
    expect(parseHash('#/logs?status=error')).toMatchObject({ path: '/logs' });
    expect(parseHash('#/logs?status=error').params.get('status')).toBe('error');
    expect(parseHash('#/connections/').path).toBe('/connections');
    expect(parseHash('').path).toBe('/');
    expect(parseHash('#token=abc').path).toBe('/');
    expect(parseHash('#main-content').path).toBe('/');
  });
  it('builds links and finds routes', () => {
    const routes: Route[] = [{ path: '/overview', title: 'Overview', view: () => {} }];
    expect(href('/logs', { status: 'ok' })).toBe('#/logs?status=ok');
    expect(href('/overview')).toBe('#/overview');
    expect(findRoute(routes, '/overview')?.title).toBe('Overview');
    expect(findRoute(routes, '/nope')).toBeUndefined();
  });
});

describe('theme', () => {
  it('cycles auto → light → dark and persists the choice', () => {
    expect(nextTheme('auto')).toBe('light');
    expect(nextTheme('light')).toBe('dark');
    expect(nextTheme('dark')).toBe('auto');
    saveTheme('dark');
    expect(localStorage.getItem(THEME_KEY)).toBe('dark');
    expect(loadTheme()).toBe('dark');
    saveTheme('auto');
    expect(localStorage.getItem(THEME_KEY)).toBeNull();
    localStorage.setItem(THEME_KEY, 'neon');
    expect(loadTheme()).toBe('auto');
  });
  it('sets data-theme on <html>, none for auto', () => {
    applyTheme('dark');
    expect(document.documentElement.dataset['theme']).toBe('dark');
    applyTheme('auto');
    expect(document.documentElement.hasAttribute('data-theme')).toBe(false);
    expect(effectiveTheme('auto', true)).toBe('dark');
    expect(effectiveTheme('light', true)).toBe('light');
  });
});

describe('page helpers', () => {
  it('endpointUrl uses the page origin in a browser and the default in the desktop window', () => {
    expect(endpointUrl({ protocol: 'http:', host: '127.0.0.1:20130', origin: 'http://127.0.0.1:20130' })).toBe('http://127.0.0.1:20130/v1');
    expect(endpointUrl({ protocol: 'wails:', host: 'wails.localhost', origin: 'wails://wails.localhost' })).toBe('http://127.0.0.1:20128/v1');
  });
  it('log filter splits ok and error statuses', () => {
    const logs = [200, 429, 503, 201].map((status, i) => ({ id: i, requestId: String(i), status })) as RequestLog[];
    expect(filterLogs(logs, 'ok').map((l) => l.status)).toEqual([200, 201]);
    expect(filterLogs(logs, 'error').map((l) => l.status)).toEqual([429, 503]);
    expect(filterLogs(logs, 'all')).toHaveLength(4);
    expect(isOkStatus(302)).toBe(true);
  });
});
