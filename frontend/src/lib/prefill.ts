// Whether a connection's model can finish an answer another target started
// (a stream cut mid-answer is continued from its delivered text, sent as a
// trailing assistant message: the model's "prefill"). The gateway learns it
// per model from continuations and the connection Test, or the connection
// declares it (providerSpecificData.assistantPrefill); GET /api/providers
// shows it as modelPrefill[model] = {prefill, prefillSource}.

import { h } from '../dom';

/** One model's entry of a connection's modelPrefill. */
export interface ModelPrefill {
  prefill?: string | null | undefined;
  prefillSource?: string | null | undefined;
}

/** Plain words for one model's prefill: a short label and a sentence. */
export interface PrefillWords {
  state: 'honoured' | 'refused' | 'unknown';
  label: string;
  sentence: string;
}

const HOW: Record<string, string> = {
  learned: 'learned from an earlier cut answer',
  probe: 'found by the connection Test',
  declared: 'declared on the connection',
};

/** The words for a model's prefill entry (an entry the gateway did not send reads as not known). */
export function prefillWords(e: ModelPrefill | null | undefined): PrefillWords {
  const how = HOW[e?.prefillSource ?? ''];
  switch (e?.prefill) {
    case 'honoured':
      return {
        state: 'honoured',
        label: 'finishes cut answers',
        sentence: `A cut answer can be finished on this model${how ? ` (${how})` : ''}.`,
      };
    case 'refused':
      return {
        state: 'refused',
        label: 'cannot finish cut answers',
        sentence: `This model does not continue an answer another target started${how ? ` (${how})` : ''}; it is never asked to.`,
      };
    default:
      return {
        state: 'unknown',
        label: 'not known yet',
        sentence: 'Not known yet whether this model can finish a cut answer: Test or the first cut answer finds out.',
      };
  }
}

/** The connection's entry for model (undefined when the gateway sent none). */
export function modelPrefillOf(c: { modelPrefill?: unknown }, model: string): ModelPrefill | undefined {
  const all = c.modelPrefill;
  if (!all || typeof all !== 'object') return undefined;
  const e = (all as Record<string, unknown>)[model];
  return e && typeof e === 'object' ? (e as ModelPrefill) : undefined;
}

/** A small tag after a model's name: its label, the sentence as title; nothing while not known. */
export function prefillTag(e: ModelPrefill | null | undefined): HTMLElement | null {
  const w = prefillWords(e);
  if (w.state === 'unknown') return null;
  return h('small', { class: `prefill prefill-${w.state} muted`, title: w.sentence, 'data-prefill': w.state }, ` · ${w.label}`);
}

/** The Test answer's prefill probe in words ("" when the Test said nothing of it). */
export function describePrefillProbe(p: (ModelPrefill & { model?: string; message?: string }) | null | undefined): string {
  if (!p || !p.prefill) return '';
  const w = prefillWords(p);
  return `cut answers on ${p.model ?? 'the model'}: ${w.label}${p.message ? ` (${p.message})` : ''}`;
}
