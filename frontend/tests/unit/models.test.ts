import { describe, expect, it } from 'vitest';
import { endpoints, type Connection } from '../../src/api';
import { servedModels } from '../../src/views/connections';

const conn = (extra: Partial<Connection>): Connection => ({ id: 'c1', provider: 'openai-compatible', name: 'A', isActive: true, ...extra });

describe('servedModels', () => {
  it('uses the served list (listed then discovered) when the gateway sends it', () => {
    expect(servedModels(conn({ models: ['mine'], discoveredModels: ['up-1'], servedModels: ['mine', 'up-1'] }))).toEqual(['mine', 'up-1']);
  });
  it('falls back to the listed models from an older gateway', () => {
    expect(servedModels(conn({ models: ['gpt-4o-mini'] }))).toEqual(['gpt-4o-mini']);
  });
  it('is empty when nothing is known', () => {
    expect(servedModels(conn({}))).toEqual([]);
  });
});

describe('agent endpoints', () => {
  it('setupAgent sends the chosen model only when there is one', async () => {
    const bodies: unknown[] = [];
    const orig = globalThis.fetch;
    globalThis.fetch = (async (_url: string, init?: RequestInit) => {
      bodies.push(init?.body ? JSON.parse(String(init.body)) : undefined);
      return new Response(JSON.stringify({ agent: 'codex', models: { model: 'm' } }), { status: 200, headers: { 'Content-Type': 'application/json' } });
    }) as typeof fetch;
    try {
      await endpoints.setupAgent('codex', 'glm-4.6');
      await endpoints.setupAgent('codex');
    } finally {
      globalThis.fetch = orig;
    }
    expect(bodies).toEqual([{ model: 'glm-4.6' }, {}]);
  });
});
