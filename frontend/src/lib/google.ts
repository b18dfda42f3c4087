/**
 * Google Cloud connections as the dashboard shows them: which account a
 * connection acts as, and a first check of a service account's key file
 * before it is sent (the gateway checks it again). Pure functions, unit-tested.
 */

export interface AccountView {
  provider: string;
  authType?: string;
  providerSpecificData?: unknown;
}

const text = (d: Record<string, unknown>, k: string): string => (typeof d[k] === 'string' ? (d[k] as string).trim() : '');

/**
 * The account line of a connection: an imported login's e-mail (and a Code
 * Assist project when one is set), a Vertex connection's service account,
 * project and region; null for other connections.
 */
export function accountLine(c: AccountView): string | null {
  const d = c.providerSpecificData && typeof c.providerSpecificData === 'object' ? (c.providerSpecificData as Record<string, unknown>) : {};
  if (c.provider === 'vertex') {
    const parts = [text(d, 'projectId'), text(d, 'region')].filter(Boolean).join(' · ');
    const who = text(d, 'clientEmail');
    return [who, parts].filter(Boolean).join(' — ') || null;
  }
  if (c.authType === 'oauth') {
    const who = text(d, 'email') || text(d, 'accountId');
    const project = c.provider === 'gemini-cli' ? text(d, 'projectId') : '';
    const line = [who ? `account ${who}` : '', project ? `project ${project}` : ''].filter(Boolean).join(' · ');
    return line || null;
  }
  return null;
}

/** Reads a service account's key file: its account, or what is wrong with it. */
export function readServiceAccount(json: string): { clientEmail: string; projectId: string } | { error: string } {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return { error: 'That file is not JSON: choose the key file downloaded from IAM → Service accounts → Keys.' };
  }
  if (!v || typeof v !== 'object') return { error: 'That file is not a service account key.' };
  const d = v as Record<string, unknown>;
  if (d['type'] !== 'service_account') {
    return { error: 'That file is not a service account key (its "type" is not "service_account").' };
  }
  if (!text(d, 'client_email') || !text(d, 'private_key')) return { error: 'The key file has no client_email or private_key.' };
  return { clientEmail: text(d, 'client_email'), projectId: text(d, 'project_id') };
}
