import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The modules a file names: imports, re-exports and inline `import('…')` types alike. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s+(?:[^'"]*?\s+from\s+)?['"](\.[^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g),
  ];
  return specs.map((m) => {
    const target = resolve(dirname(file), m[1] ?? '');
    return target.endsWith('.ts') ? target : `${target}.ts`;
  });
}

/** Every import circle among the dashboard's modules, each as a path of file names. */
function circles(): string[][] {
  const graph = new Map(sources(src).map((f) => [f, imports(f)]));
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const walk = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      found.push([...path.slice(path.indexOf(file)), file].map((f) => relative(src, f)));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) walk(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) walk(file, []);
  return found;
}

describe('dashboard modules', () => {
  it('import one another without a circle', () => {
    expect(circles()).toEqual([]);
  });
});
