// Searching a connection's model list and editing its hidden models and
// aliases (PATCH /api/providers/{id} {hiddenModels, modelAliases}).

import type { Connection } from '../api';

/** Every model the connection knows: listed and discovered (or the catalogue's), hidden ones included. */
export function knownModels(c: Connection): string[] {
  const list = Array.isArray(c['knownModels']) ? (c['knownModels'] as unknown[]) : Array.isArray(c.servedModels) ? c.servedModels : [];
  return list.map(String);
}

export function hiddenModels(c: Connection): string[] {
  return Array.isArray(c['hiddenModels']) ? (c['hiddenModels'] as unknown[]).map(String) : [];
}

export function modelAliases(c: Connection): Record<string, string> {
  const raw = c['modelAliases'];
  const out: Record<string, string> = {};
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/**
 * The names matching a search: every word of the query (case ignored) appears
 * in the name; an empty query matches everything. Order is kept.
 */
export function filterModels(names: readonly string[], query: string): string[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...names];
  return names.filter((n) => {
    const lower = n.toLowerCase();
    return words.every((w) => lower.includes(w));
  });
}
