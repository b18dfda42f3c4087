// The gateway's route → role table, read from its source
// (backend/api/people.go routeRoles), as GET /api/session gives it: unit
// tests gate by the real table, never a copy.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const peopleGo = resolve(dirname(fileURLToPath(import.meta.url)), '../../../backend/api/people.go');

/** "METHOD /api/path-template" → least role, public routes left out (as the session's `routes`) unless asked for. */
export function routeTable(withPublic = false): Record<string, string> {
  const src = readFileSync(peopleGo, 'utf8');
  const start = src.indexOf('var routeRoles = map[string]string{');
  const end = src.indexOf('\n}\n', start);
  if (start < 0 || end < 0) throw new Error('routeRoles not found in backend/api/people.go');
  const roles: Record<string, string> = { RoleViewer: 'viewer', RoleOperator: 'operator', RoleAdmin: 'admin', rolePublic: 'public' };
  const out: Record<string, string> = {};
  for (const m of src.slice(start, end).matchAll(/^\s*"([A-Z]+ \/[^"]*)":\s*(\w+),/gm)) {
    const role = roles[m[2]!];
    if (!role) throw new Error(`unknown role constant ${m[2]} for ${m[1]}`);
    if (withPublic || role !== 'public') out[m[1]!] = role;
  }
  return out;
}
