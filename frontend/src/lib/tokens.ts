// The Tokens page's rules (docs/API.md, People): who may list, mint and
// revoke scoped management tokens, which roles a new token may take, and how
// a token row reads. Pure, so the unit tests cover them without a gateway.

import { roleAtLeast, type ManagementToken } from '../api';

export type Role = 'viewer' | 'operator' | 'admin';

/** The roles, least first, with what each may do in plain words. */
export const ROLES: ReadonlyArray<{ role: Role; label: string; sentence: string }> = [
  { role: 'viewer', label: 'Viewer', sentence: 'reads everything but secrets and people' },
  { role: 'operator', label: 'Operator', sentence: 'also resets breakers, clears cooldowns, releases leases, pauses' },
  { role: 'admin', label: 'Admin', sentence: 'everything: connections, keys, settings, users, tokens' },
];

/**
 * The least role of GET, POST and DELETE /api/tokens (routeRoles in
 * backend/api/people.go): tokens name the people who minted them, so only
 * admins read them.
 */
export const TOKENS_ROLE: Role = 'admin';

export interface TokenAccess {
  /** May read the list. */
  list: boolean;
  /** May mint and revoke. */
  manage: boolean;
  /** Why not, in plain words ('' when allowed). */
  reason: string;
}

/**
 * What the person acting as `role` may do on the Tokens page; `need` is the
 * least role of GET /api/tokens as the gateway's route table says
 * (GET /api/session `routes`), TOKENS_ROLE without one.
 */
export function tokenAccess(role: string | undefined, need: Role = TOKENS_ROLE, manageNeed: Role = need): TokenAccess {
  if (roleAtLeast(role, need)) return { list: true, manage: roleAtLeast(role, manageNeed), reason: '' };
  return {
    list: false,
    manage: false,
    reason: `Only an admin can see, create or revoke management tokens (the list names the people who created them). Your role is ${roleLabel(role ?? '') || 'unknown'}. Ask an admin for a token.`,
  };
}

/** The roles a token minted by `role` may have: none above the creator's. */
export function roleChoices(role: string | undefined): Role[] {
  return ROLES.filter((r) => roleAtLeast(role, r.role)).map((r) => r.role);
}

/** A role's plain label ("operator" → "Operator"); an unknown one as written. */
export function roleLabel(role: string): string {
  return ROLES.find((r) => r.role === role)?.label ?? role;
}

/** A role's label and what it may do ("Viewer — reads everything but secrets and people"). */
export function roleOption(role: string): string {
  const r = ROLES.find((x) => x.role === role);
  return r ? `${r.label} — ${r.sentence}` : role;
}

/** Whether the token is an instance's own management token (published at its start). */
export function isInstanceToken(t: Pick<ManagementToken, 'id' | 'createdBy'>): boolean {
  return t.id.startsWith('instance:') || t.createdBy === 'instance';
}

/** Who minted the token, in plain words. */
export function creatorText(t: Pick<ManagementToken, 'id' | 'createdBy'>): string {
  if (isInstanceToken(t)) return 'the instance itself (published at start)';
  if (!t.createdBy) return 'unknown';
  if (t.createdBy === 'management token') return 'the management token';
  if (t.createdBy.startsWith('token:')) return `the token “${t.createdBy.slice('token:'.length)}”`;
  return t.createdBy;
}

/** What the revoke confirmation says. */
export function revokeMessage(t: { name: string; instance: boolean }): string {
  if (t.instance) {
    return `Revoke “${t.name}”? Other instances stop accepting that instance's management token until it starts again (it publishes the token at each start).`;
  }
  return `Revoke “${t.name}”? Every instance refuses it from its next request; whatever uses it gets 401 and needs a new token.`;
}

/** The row fields a token shows: never a value beyond its masked prefix. */
export interface TokenRow {
  id: string;
  name: string;
  role: string;
  roleLabel: string;
  masked: string;
  creator: string;
  createdAt: string | null;
  lastUsedAt: string | null;
  instance: boolean;
}

/** Whitelists a token's fields for display (a value sent by mistake never reaches the page). */
export function toTokenRow(t: ManagementToken): TokenRow {
  const masked = typeof t.tokenMasked === 'string' ? t.tokenMasked.slice(0, 12) : '';
  return {
    id: t.id,
    name: t.name,
    role: t.role,
    roleLabel: roleLabel(t.role),
    masked,
    creator: creatorText(t),
    createdAt: t.createdAt || null,
    lastUsedAt: t.lastUsedAt || null,
    instance: isInstanceToken(t),
  };
}
