// Issue 42 item 8: the plain-words catalogue (backend/words, served as
// GET /api/words and read by src/lib/words.ts) covers every code the
// dashboard names and every health state; the Go test
// TestEveryEmittedCodeHasWords covers every code the backend can emit.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HEALTH_STATES } from '../../src/lib/healthmodel';
import { sentence, setWords } from '../../src/lib/words';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every "CODE": "sentence" pair of backend/words/*.go. */
function catalogueCodes(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ['words.go', 'apicodes.go']) {
    const text = readFileSync(resolve(root, 'backend/words', f), 'utf8');
    for (const m of text.matchAll(/^\s*"([A-Za-z_]+)":\s*"((?:[^"\\]|\\.)*)",/gm)) out[m[1]!] = m[2]!;
  }
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the words catalogue', () => {
  const codes = catalogueCodes();

  it('is parsed from the backend', () => {
    expect(Object.keys(codes).length).toBeGreaterThan(150);
  });

  it('has a sentence for every error code the dashboard names', () => {
    const named = new Set<string>();
    for (const f of sources(resolve(root, 'frontend/src'))) {
      for (const m of readFileSync(f, 'utf8').matchAll(/'([A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+)'/g)) named.add(m[1]!);
    }
    named.delete('HALF_OPEN'); // a breaker state, shown by its badge
    const missing = [...named].filter((c) => !codes[c]);
    expect(missing).toEqual([]);
  });

  it('reads every code as its sentence once loaded, never the raw code', () => {
    setWords({ codes, states: {}, fixes: {} });
    for (const [code, s] of Object.entries(codes)) {
      expect(sentence(code)).toBe(s);
      if (/^[A-Z]/.test(code)) expect(sentence(code)).not.toContain(code);
    }
    setWords(null);
  });

  it('names every health state', () => {
    const text = readFileSync(resolve(root, 'backend/words/words.go'), 'utf8');
    for (const st of HEALTH_STATES) expect(text, st).toMatch(new RegExp(`"${st}":\\s*\\{"`));
  });
});
