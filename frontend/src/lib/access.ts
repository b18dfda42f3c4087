// Who may send what: the gateway's own route → role table, as
// GET /api/session gives it (`routes`: "METHOD /api/path-template" → the
// least role; backend/api/people.go routeRoles). The dashboard keeps no list
// of its own: a control names the route it sends, and this says whether the
// session's role may send it and, if not, why. Pure (unit-tested).

import { roleAtLeast } from '../api';

export type Need = 'viewer' | 'operator' | 'admin';

/** A route as the role table names it: "POST /api/providers", "DELETE /api/keys/{id}". */
export type RouteKey = `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} /${string}`;

/** What the session says: its role and the role table (both optional: an older gateway, no session). */
export interface AccessInfo {
  role?: string | null;
  routes?: Record<string, string> | null;
}

/** The least role `key` needs by the table; a route the table does not name needs admin (as on the gateway). */
export function routeNeed(routes: AccessInfo['routes'], key: RouteKey): Need {
  const r = routes?.[key];
  return r === 'viewer' || r === 'operator' ? r : 'admin';
}

/**
 * Why the session may not send `key` ("" when it may). Without a session
 * (a token of unknown role acts as the instance's, admin) nothing is denied.
 */
export function routeDenied(key: RouteKey, s: AccessInfo | null | undefined): string {
  if (!s?.role) return '';
  return roleDenied(routeNeed(s.routes, key), s.role);
}

/** The first reason among several routes one control sends (it needs them all). */
export function routesDenied(keys: readonly RouteKey[], s: AccessInfo | null | undefined): string {
  for (const k of keys) {
    const why = routeDenied(k, s);
    if (why) return why;
  }
  return '';
}

/** Why role may not do what needs `need` ("" when it may). A token of unknown role acts as admin. */
export function roleDenied(need: Need, role: string | null | undefined): string {
  const r = role || 'admin';
  if (roleAtLeast(r, need)) return '';
  return need === 'admin' ? `Only an admin can do this (you are ${article(r)} ${r}).` : `Needs an operator or an admin (you are ${article(r)} ${r}).`;
}

const article = (w: string) => (/^[aeiou]/i.test(w) ? 'an' : 'a');
