// The one catalogue of plain words (GET /api/words, backend/words): the
// sentence for every error code, verdict and exclusion reason, the label and
// sentence of every health state, the label of every fix. Every page shows
// these sentences, with the raw code beside them as a small tag for
// searching. Until the catalogue has loaded (or if it cannot), a code reads
// as its words ("SOME_CODE" → "Some code.").

import { h } from '../dom';

export interface StateWords {
  label: string;
  sentence: string;
}

export interface Words {
  codes: Record<string, string>;
  states: Record<string, StateWords>;
  fixes: Record<string, string>;
}

let words: Words | null = null;

/** Installs the catalogue (from GET /api/words). */
export function setWords(w: Words | null): void {
  words = w && typeof w === 'object' ? { codes: w.codes ?? {}, states: w.states ?? {}, fixes: w.fixes ?? {} } : null;
}

/** The code in words, for codes the catalogue does not know. */
function spelled(code: string): string {
  const w = code.replace(/_/g, ' ').toLowerCase().trim();
  return w ? `${w.charAt(0).toUpperCase()}${w.slice(1)}.` : '';
}

/** The sentence a user understands for an error code, verdict kind or exclusion reason. */
export function sentence(code: string | null | undefined): string {
  if (!code) return '';
  return words?.codes[code] ?? spelled(code);
}

/** The catalogue's sentence for a code, or undefined when it has none (not spelled out). */
export function knownSentence(code: string | null | undefined): string | undefined {
  return code ? words?.codes[code] : undefined;
}

/** A health state's label and sentence, or undefined when the catalogue does not know it. */
export function stateWords(state: string | null | undefined): StateWords | undefined {
  return state ? words?.states[state] : undefined;
}

/** A fix's button label, or undefined when unknown. */
export function fixLabel(fix: string): string | undefined {
  return words?.fixes[fix];
}

/** The sentence with the code as a small tag after it (searchable, copyable). */
export function plainCode(code: string | null | undefined, extraClass = ''): HTMLElement | string {
  if (!code) return '';
  return h(
    'span',
    { class: `plain-code ${extraClass}`.trim(), title: code },
    sentence(code),
    ' ',
    h('code', { class: 'code-tag', 'data-code': code }, code),
  );
}
