import { describe, expect, it } from 'vitest';
import { accountLine, readServiceAccount } from '../../src/lib/google';

describe('accountLine', () => {
  it('names an imported login’s account and a Code Assist project', () => {
    expect(accountLine({ provider: 'gemini-cli', authType: 'oauth', providerSpecificData: { email: 'a@b', importedFrom: 'gemini-cli' } })).toBe('account a@b');
    expect(accountLine({ provider: 'gemini-cli', authType: 'oauth', providerSpecificData: { email: 'a@b', projectId: 'p-1' } })).toBe('account a@b · project p-1');
    expect(accountLine({ provider: 'codex', authType: 'oauth', providerSpecificData: { accountId: 'acc' } })).toBe('account acc');
  });
  it('names a Vertex connection’s service account, project and region', () => {
    expect(accountLine({ provider: 'vertex', providerSpecificData: { clientEmail: 'sa@p.iam', projectId: 'p', region: 'us-central1' } })).toBe('sa@p.iam — p · us-central1');
  });
  it('is null for API keys and logins without an account', () => {
    expect(accountLine({ provider: 'openai', authType: 'apikey', providerSpecificData: { email: 'x' } })).toBeNull();
    expect(accountLine({ provider: 'claude', authType: 'oauth' })).toBeNull();
  });
});

describe('readServiceAccount', () => {
  it('reads a key file and refuses others in plain words', () => {
    expect(readServiceAccount(JSON.stringify({ type: 'service_account', client_email: 'sa@p', private_key: 'k', project_id: 'p' }))).toEqual({ clientEmail: 'sa@p', projectId: 'p' });
    expect(readServiceAccount('{')).toHaveProperty('error');
    expect(readServiceAccount(JSON.stringify({ type: 'authorized_user' }))).toEqual({ error: expect.stringMatching(/not a service account key/) });
    expect(readServiceAccount(JSON.stringify({ type: 'service_account' }))).toHaveProperty('error');
  });
});
