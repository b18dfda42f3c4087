import { ApiError, endpoints, isAbortError, type ResilienceSettings } from '../api';
import { busy, clear, errorBox, h, loading, notice, setFieldError } from '../dom';
import {
  allFields,
  buildSections,
  clampedFields,
  countLeaves,
  diffToPatch,
  fieldForParam,
  formatValue,
  getAt,
  hintFor,
  validate,
  type FieldSpec,
  type Json,
  type SectionSpec,
} from '../lib/resilience-form';
import { live } from '../live';
import type { ViewContext } from '../router';
import { saveResilience } from './save-settings';
import { gateForm, gateWrites } from './role-gate';

const idFor = (key: string) => `res-${key.replace(/[^A-Za-z0-9_-]/g, '-')}`;

export function renderResilience(root: HTMLElement, ctx: ViewContext): () => void {
  let baseline: ResilienceSettings | null = null;
  let fields: FieldSpec[] = [];
  const inputs = new Map<string, HTMLInputElement>();
  const hints = new Map<string, HTMLElement>();
  const errorSlots = new Map<string, HTMLElement>();
  const touched = new Set<string>();
  let submitted = false;
  let saving = false;

  const heading = h('h1', { tabindex: '-1' }, 'Resilience Settings');
  const resetBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Reset breakers');
  const reloadBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Reload');
  const message = h('div', { class: 'row-message', 'aria-live': 'polite' });
  const formArea = h('div', { class: 'list-area' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, h('div', { class: 'btn-row' }, resetBtn, reloadBtn)),
    h(
      'p',
      { class: 'muted page-intro' },
      'How the gateway reacts to rate limits, failures and slow streams. Changes apply at once and persist; only the fields you change are sent.',
    ),
    message,
    formArea,
  );

  // ------------------------------------------------------------ load and render

  async function load(quiet = false): Promise<void> {
    if (!quiet || !baseline) clear(formArea, loading('Loading resilience settings…'));
    reloadBtn.disabled = true;
    try {
      const doc = await endpoints.getResilience(ctx.signal);
      if (ctx.signal.aborted) return;
      if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('The gateway returned settings that are not an object.');
      baseline = doc;
      renderForm();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(formArea, errorBox(err, () => void load()));
    } finally {
      reloadBtn.disabled = false;
    }
  }

  const saveBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save changes');
  const discardBtn = h('button', { type: 'button', class: 'btn' }, 'Discard changes');
  const dirtyNote = h('span', { class: 'muted small', 'aria-live': 'polite' });
  const formStatus = h('div', { class: 'form-status', 'aria-live': 'polite' });

  function renderForm(): void {
    if (!baseline) return;
    const sections = buildSections(baseline);
    fields = allFields(sections);
    inputs.clear();
    hints.clear();
    errorSlots.clear();
    touched.clear();
    submitted = false;
    const form = h(
      'form',
      { class: 'settings-form', novalidate: true, 'aria-labelledby': 'res-form-title' },
      h('h2', { id: 'res-form-title', class: 'visually-hidden' }, 'Settings'),
      sections.map((s) => renderSection(s, 2)),
      h('div', { class: 'form-footer' }, h('div', { class: 'form-actions' }, saveBtn, discardBtn, dirtyNote), formStatus),
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void save();
    });
    gateForm(form, 'PATCH /api/resilience', 'Changing these settings');
    form.addEventListener('input', (ev) => onEdit(ev.target as HTMLElement));
    form.addEventListener('change', (ev) => {
      const key = (ev.target as HTMLElement).dataset['key'];
      if (key) touched.add(key);
      refreshState();
    });
    clear(formArea, form);
    refreshState();
  }

  function renderSection(s: SectionSpec, level: number): HTMLElement {
    return h(
      'fieldset',
      { class: level === 2 ? 'card settings-section' : 'settings-group', 'data-section': s.key },
      h('legend', { class: level === 2 ? 'section-legend' : 'group-legend' }, s.title),
      s.description ? h('p', { class: 'muted small section-desc' }, s.description) : null,
      s.fields.length ? h('div', { class: 'form-grid' }, s.fields.map(renderField)) : null,
      s.groups.map((g) => renderSection(g, level + 1)),
    );
  }

  function renderField(f: FieldSpec): HTMLElement {
    const id = idFor(f.key);
    const value = getAt(baseline ?? {}, f.path);
    const errorSlot = h('small', { id: `${id}-error`, class: 'field-error' });
    errorSlots.set(f.key, errorSlot);
    if (f.kind === 'boolean') {
      const input = h('input', { id, type: 'checkbox', name: f.key, 'data-key': f.key });
      input.checked = value === true;
      inputs.set(f.key, input);
      return h(
        'div',
        { class: 'field field-check' },
        h('label', { for: id }, input, ' ', f.label),
        f.hint ? h('small', { class: 'hint' }, f.hint) : null,
        errorSlot,
      );
    }
    const input = h('input', {
      id,
      name: f.key,
      'data-key': f.key,
      type: 'text',
      inputmode: f.isMs ? 'decimal' : f.kind === 'number' ? 'numeric' : 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-describedby': `${id}-hint`,
    });
    input.value = formatValue(f.kind, value, f.isMs);
    inputs.set(f.key, input);
    const hint = h('small', { id: `${id}-hint`, class: 'hint' }, hintFor(f, input.value));
    hints.set(f.key, hint);
    return h('div', { class: 'field' }, h('label', { for: id }, f.isMs ? `${f.label} (s)` : f.label), input, hint, errorSlot);
  }

  // ------------------------------------------------------------ editing

  function rawValues(): Map<string, string | boolean> {
    const raw = new Map<string, string | boolean>();
    for (const [key, input] of inputs) raw.set(key, input.type === 'checkbox' ? input.checked : input.value);
    return raw;
  }

  function onEdit(target: HTMLElement): void {
    const key = target.dataset['key'];
    if (!key) return;
    const f = fields.find((x) => x.key === key);
    const hint = hints.get(key);
    if (f && hint) hint.textContent = hintFor(f, (target as HTMLInputElement).value);
    formStatus.replaceChildren();
    refreshState();
  }

  /** Recomputes errors (shown for touched fields, or all after a save attempt) and the change count. */
  function refreshState(): { patch: ResilienceSettings; errors: Map<string, string> } {
    const { values, errors } = validate(fields, rawValues());
    for (const [key, input] of inputs) {
      const slot = errorSlots.get(key);
      if (!slot) continue;
      const show = submitted || touched.has(key);
      setFieldError(input, slot, show ? (errors.get(key) ?? null) : null);
    }
    const patch = baseline ? diffToPatch(baseline, values, fields) : {};
    const changed = countLeaves(patch);
    dirtyNote.textContent =
      changed || errors.size ? `${changed} unsaved change${changed === 1 ? '' : 's'}${errors.size ? `, ${errors.size} to fix` : ''}` : 'No unsaved changes';
    for (const [key, input] of inputs) {
      const orig = getAt(baseline ?? {}, key.split('.'));
      const cur = input.type === 'checkbox' ? input.checked : input.value.trim();
      const same = input.type === 'checkbox' ? cur === orig : cur === formatValue(fields.find((f) => f.key === key)?.kind ?? 'text', orig as Json);
      input.closest('.field')?.classList.toggle('field-changed', !same);
    }
    discardBtn.disabled = changed === 0 && errors.size === 0;
    return { patch, errors };
  }

  function isDirty(): boolean {
    if (!baseline) return false;
    const { values, errors } = validate(fields, rawValues());
    return errors.size > 0 || Object.keys(diffToPatch(baseline, values, fields)).length > 0;
  }

  async function save(): Promise<void> {
    if (!baseline || saving) return;
    submitted = true;
    formStatus.replaceChildren();
    const { patch, errors } = refreshState();
    if (errors.size) {
      clear(formStatus, h('p', { class: 'form-error', role: 'alert' }, `Fix ${errors.size} field${errors.size === 1 ? '' : 's'} before saving.`));
      const first = fields.find((f) => errors.has(f.key));
      if (first) inputs.get(first.key)?.focus();
      return;
    }
    if (Object.keys(patch).length === 0) {
      clear(formStatus, notice('No changes to save.', 'info'));
      return;
    }
    saving = true;
    const outcome = await saveResilience(patch, [saveBtn, discardBtn], saveBtn);
    saving = false;
    if (ctx.signal.aborted) return;
    if ('err' in outcome) {
      const err = outcome.err;
      const f = err instanceof ApiError ? fieldForParam(err.param, fields) : undefined;
      const input = f ? inputs.get(f.key) : undefined;
      const slot = f ? errorSlots.get(f.key) : undefined;
      if (err instanceof ApiError && input && slot) {
        setFieldError(input, slot, `${err.message} (${err.code}, ${err.param})`);
        input.focus();
        clear(formStatus, h('p', { class: 'form-error', role: 'alert' }, 'The gateway rejected a value; see the highlighted field.'));
      } else {
        clear(formStatus, errorBox(err));
      }
      return;
    }
    const saved = outcome.saved && typeof outcome.saved === 'object' ? outcome.saved : null;
    const clamped = saved ? clampedFields(patch, saved, fields) : new Map();
    if (saved) baseline = saved;
    const count = countLeaves(patch);
    renderForm();
    const lines: string[] = [];
    for (const [key, v] of clamped) lines.push(`${key} was adjusted to ${formatValue(Array.isArray(v) ? 'codes' : 'text', v)} (allowed range).`);
    clear(
      formStatus,
      h('div', { class: 'alert alert-success', role: 'status', 'data-testid': 'saved' }, `Saved ${count} change${count === 1 ? '' : 's'}.`, lines.length ? h('ul', null, lines.map((l) => h('li', null, l))) : null),
    );
    saveBtn.focus();
  }

  discardBtn.addEventListener('click', () => {
    renderForm();
    clear(formStatus, notice('Changes discarded.', 'info'));
    saveBtn.focus();
  });

  gateWrites([[resetBtn, 'POST /api/resilience/reset']]);
  resetBtn.addEventListener('click', () =>
    void busy([resetBtn], async () => {
      try {
        const res = await endpoints.resetBreakers();
        if (ctx.signal.aborted) return;
        const n = res?.resetCount ?? 0;
        clear(message, notice(n ? `Reset ${n} circuit breaker${n === 1 ? '' : 's'} to closed.` : 'No breaker needed a reset: all were closed.', 'success'));
      } catch (err) {
        if (!ctx.signal.aborted) clear(message, errorBox(err));
      }
    }, { button: resetBtn, label: 'Resetting…' }),
  );

  reloadBtn.addEventListener('click', () => {
    if (isDirty()) clear(message, notice('Reloaded; unsaved changes were dropped.', 'info'));
    else message.replaceChildren();
    void load();
  });

  // Someone else (another window, the tray, a script) changed the settings.
  const unsubscribe = live.subscribe('settings', async (ev) => {
    if (ev.data.section !== 'resilience' || saving || !baseline) return;
    try {
      const doc = await endpoints.getResilience(ctx.signal);
      if (ctx.signal.aborted || JSON.stringify(doc) === JSON.stringify(baseline)) return;
      if (isDirty()) {
        const reload = h('button', { type: 'button', class: 'btn btn-small' }, 'Reload now');
        reload.addEventListener('click', () => {
          message.replaceChildren();
          void load();
        });
        clear(message, h('div', { class: 'alert alert-info', role: 'status' }, 'These settings were changed elsewhere. ', reload));
      } else {
        baseline = doc;
        renderForm();
        clear(message, notice('Settings were changed elsewhere; showing the current values.', 'info'));
      }
    } catch {
      /* the next reload shows any error */
    }
  });

  void load();
  return unsubscribe;
}
