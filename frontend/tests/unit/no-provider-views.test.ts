// The dashboard renders every provider's connection form from its catalogue
// schema (views/provider-form.ts): no view names a provider. The ids come
// from the gateway's own catalogue sources (backend/providers: catalog.go and
// each provider folder's rows), so a new provider is covered without a list here.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const views = resolve(here, '../../src/views');
const providersDir = resolve(here, '../../../backend/providers');

/** Every catalogue id and alias the Go sources declare. */
function providerIds(): Set<string> {
  const files = [join(providersDir, 'catalog.go')];
  for (const d of readdirSync(providersDir, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    for (const f of readdirSync(join(providersDir, d.name))) if (f.endsWith('.go') && !f.endsWith('_test.go')) files.push(join(providersDir, d.name, f));
  }
  const ids = new Set<string>();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/\{ID:\s*"([^"]+)"/g)) ids.add(m[1]!.toLowerCase());
    // A provider folder's id constant (const ID = "claude"; its rows say ID: ID).
    for (const m of text.matchAll(/\bID\s*=\s*"([^"]+)"/g)) ids.add(m[1]!.toLowerCase());
    for (const m of text.matchAll(/Aliases:\s*\[\]string\{([^}]*)\}/g)) for (const a of m[1]!.matchAll(/"([^"]+)"/g)) ids.add(a[1]!.toLowerCase());
  }
  return ids;
}

/** The provider ids a source names as a whole string literal. */
export function namedProviders(source: string, ids: Set<string>): string[] {
  const found = new Set<string>();
  for (const m of source.matchAll(/(['"`])((?:(?!\1)[^\\\n$]){2,40})\1/g)) {
    const v = m[2]!.trim().toLowerCase();
    if (ids.has(v)) found.add(v);
  }
  return [...found].sort();
}

/**
 * The views that still name providers, and why. None of them is a
 * connection form (the import card's CLIs come from GET
 * /api/providers/import); agents.ts names the Codex CLI's model family; rules.ts's
 * preview starts from an example provider. The list may only shrink: a file
 * that stops naming one passes, a new name fails.
 */
const ALLOWED: Record<string, string[]> = {
  'agents.ts': ['codex'],
  'rules.ts': ['agentrouter'],
};

describe('no provider-specific view', () => {
  const ids = providerIds();

  it('reads the catalogue ids from the Go sources', () => {
    expect(ids.size).toBeGreaterThan(25);
    for (const id of ['openai', 'azure-openai', 'azure', 'bedrock', 'vertex', 'gemini-cli', 'claude', 'cc', 'codex', 'cx', 'ollama', 'github-copilot']) expect(ids).toContain(id);
  });

  it('finds a provider named in a source (the check bites)', () => {
    expect(namedProviders(`if (c.provider === 'vertex') x(); const y = "aws-bedrock"; const z = \`azure\`;`, ids)).toEqual(['aws-bedrock', 'azure', 'vertex']);
    expect(namedProviders(`const label = 'Vertex AI'; const t = \`\${p.id}\`;`, ids)).toEqual([]);
  });

  for (const file of readdirSync(views).filter((f) => f.endsWith('.ts'))) {
    it(`${file} names no provider beyond its justified list`, () => {
      const allowed = new Set(ALLOWED[file] ?? []);
      const named = namedProviders(readFileSync(join(views, file), 'utf8'), ids);
      expect(named.filter((id) => !allowed.has(id))).toEqual([]);
    });
  }

  it('the form logic names no provider', () => {
    expect(namedProviders(readFileSync(resolve(here, '../../src/lib/provider-form.ts'), 'utf8'), ids)).toEqual([]);
  });
});
