import { ApiError, endpoints, isAbortError } from '../api';
import { clear, errorBox, h, loading, notice, setFieldError } from '../dom';
import { formatDuration } from '../lib/format';
import {
  adjustedFields,
  backoffLadder,
  fieldForLockoutParam,
  LOCKOUT_DEFAULTS,
  LOCKOUT_FIELDS,
  lockoutChanges,
  lockoutPatch,
  msToSecondsText,
  readLockout,
  toRaw,
  validateLockout,
  type LockoutField,
  type LockoutRaw,
  type ModelLockoutSettings,
} from '../lib/lockout-settings';
import { live } from '../live';
import { href, type ViewContext } from '../router';
import { saveResilience } from './save-settings';
import { gateForm } from './role-gate';

const ID: Record<LockoutField, string> = {
  enabled: 'lk-enabled',
  errorCodes: 'lk-error-codes',
  baseCooldownMs: 'lk-base-cooldown',
  maxCooldownMs: 'lk-max-cooldown',
  maxBackoffSteps: 'lk-max-backoff-steps',
  useExponentialBackoff: 'lk-exponential',
};

const LABEL: Record<LockoutField, string> = {
  enabled: 'Enable model lockout',
  errorCodes: 'HTTP statuses that lock a model',
  baseCooldownMs: 'Base cooldown (seconds)',
  maxCooldownMs: 'Maximum cooldown (seconds)',
  maxBackoffSteps: 'Maximum backoff steps',
  useExponentialBackoff: 'Double the cooldown on each repeat (exponential backoff)',
};

const d = LOCKOUT_DEFAULTS;
const DEFAULT_TEXT: Record<LockoutField, string> = {
  enabled: d.enabled ? 'on' : 'off',
  errorCodes: d.errorCodes.join(', '),
  baseCooldownMs: `${msToSecondsText(d.baseCooldownMs)} s`,
  maxCooldownMs: `${msToSecondsText(d.maxCooldownMs)} s`,
  maxBackoffSteps: String(d.maxBackoffSteps),
  useExponentialBackoff: d.useExponentialBackoff ? 'on' : 'off',
};

const HINT: Record<LockoutField, string> = {
  enabled: 'Off: errors only fail over, no model is ever locked out.',
  errorCodes: 'Comma separated, 400–599.',
  baseCooldownMs: 'How long the first lock lasts; 1 s to 1 day.',
  maxCooldownMs: 'The longest a lock lasts; at least the base cooldown.',
  maxBackoffSteps: 'How many times the cooldown may double, 0–20.',
  useExponentialBackoff: 'Off: every lock lasts the base cooldown.',
};

export function renderLockoutSettings(root: HTMLElement, ctx: ViewContext): () => void {
  let baseline: ModelLockoutSettings | null = null;
  let saving = false;
  let submitted = false;
  const touched = new Set<LockoutField>();

  const heading = h('h1', { tabindex: '-1' }, 'Lockout Settings');
  const reloadBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Reload');
  const message = h('div', { class: 'row-message', 'aria-live': 'polite' });
  const formArea = h('div', { class: 'list-area' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, reloadBtn),
    h(
      'p',
      { class: 'muted page-intro' },
      'When a model keeps failing on one connection with one of these statuses, the gateway locks only that model out on that connection for a while; the connection keeps serving its other models. Active locks are listed on ',
      h('a', { href: href('/model-cooldowns') }, 'Model Cooldowns'),
      '.',
    ),
    message,
    formArea,
  );

  // ------------------------------------------------------------ controls

  const checkbox = (k: LockoutField) => h('input', { id: ID[k], type: 'checkbox', name: k, 'data-key': k, 'aria-describedby': `${ID[k]}-hint` });
  const text = (k: LockoutField, mode: 'numeric' | 'decimal' | 'text') =>
    h('input', { id: ID[k], type: 'text', name: k, 'data-key': k, inputmode: mode, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${ID[k]}-hint` });

  const inputs = {
    enabled: checkbox('enabled'),
    errorCodes: text('errorCodes', 'text'),
    baseCooldownMs: text('baseCooldownMs', 'decimal'),
    maxCooldownMs: text('maxCooldownMs', 'decimal'),
    maxBackoffSteps: text('maxBackoffSteps', 'numeric'),
    useExponentialBackoff: checkbox('useExponentialBackoff'),
  } satisfies Record<LockoutField, HTMLInputElement>;
  const hints = new Map<LockoutField, HTMLElement>();
  const slots = new Map<LockoutField, HTMLElement>();

  function hintText(k: LockoutField): string {
    let extra = '';
    if (k === 'baseCooldownMs' || k === 'maxCooldownMs') {
      const n = Number(inputs[k].value.trim());
      if (inputs[k].value.trim() !== '' && Number.isFinite(n) && n >= 60) extra = `= ${formatDuration(n * 1000)}. `;
    }
    return `${extra}${HINT[k]} Default: ${DEFAULT_TEXT[k]}.`;
  }

  function fieldEl(k: LockoutField): HTMLElement {
    const hint = h('small', { id: `${ID[k]}-hint`, class: 'hint' }, hintText(k));
    const slot = h('small', { id: `${ID[k]}-error`, class: 'field-error' });
    hints.set(k, hint);
    slots.set(k, slot);
    const input = inputs[k];
    if (input.type === 'checkbox') return h('div', { class: 'field field-check field-wide', 'data-field': k }, h('label', { for: input.id }, input, ' ', LABEL[k]), hint, slot);
    const unit = k === 'baseCooldownMs' || k === 'maxCooldownMs' ? h('span', { class: 'unit', 'aria-hidden': 'true' }, 's') : null;
    return h(
      'div',
      { class: k === 'errorCodes' ? 'field field-wide field-codes' : 'field', 'data-field': k },
      h('label', { for: input.id }, LABEL[k]),
      unit ? h('div', { class: 'input-unit' }, input, unit) : input,
      hint,
      slot,
    );
  }

  const saveBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save changes');
  const discardBtn = h('button', { type: 'button', class: 'btn' }, 'Discard changes');
  const defaultsBtn = h('button', { type: 'button', class: 'btn' }, 'Restore defaults');
  const dirtyNote = h('span', { class: 'muted small', 'aria-live': 'polite' });
  const ladder = h('p', { class: 'muted small ladder', 'data-testid': 'ladder' });
  const formStatus = h('div', { class: 'form-status', 'aria-live': 'polite' });

  const form = h(
    'form',
    { class: 'settings-form', novalidate: true, 'aria-labelledby': 'lk-form-title' },
    h(
      'fieldset',
      { class: 'card settings-section' },
      h('legend', { class: 'section-legend', id: 'lk-form-title' }, 'Model lockout'),
      h('div', { class: 'form-grid' }, fieldEl('enabled')),
      h('div', { class: 'form-grid' }, fieldEl('errorCodes')),
      h('div', { class: 'form-grid form-grid-3' }, fieldEl('baseCooldownMs'), fieldEl('maxCooldownMs'), fieldEl('maxBackoffSteps')),
      h('div', { class: 'form-grid' }, fieldEl('useExponentialBackoff')),
      ladder,
    ),
    h('div', { class: 'form-footer' }, h('div', { class: 'form-actions' }, saveBtn, discardBtn, defaultsBtn, dirtyNote), formStatus),
  );
  gateForm(form, 'PATCH /api/resilience', 'Changing the lockout settings');

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void save();
  });
  form.addEventListener('input', (ev) => {
    const k = (ev.target as HTMLElement).dataset['key'] as LockoutField | undefined;
    if (k) hints.get(k)!.textContent = hintText(k);
    formStatus.replaceChildren();
    refresh();
  });
  form.addEventListener('change', (ev) => {
    const k = (ev.target as HTMLElement).dataset['key'] as LockoutField | undefined;
    if (k) touched.add(k);
    refresh();
  });

  // ------------------------------------------------------------ state

  function raw(): LockoutRaw {
    return {
      enabled: inputs.enabled.checked,
      errorCodes: inputs.errorCodes.value,
      baseCooldownMs: inputs.baseCooldownMs.value,
      maxCooldownMs: inputs.maxCooldownMs.value,
      maxBackoffSteps: inputs.maxBackoffSteps.value,
      useExponentialBackoff: inputs.useExponentialBackoff.checked,
    };
  }

  function fill(s: ModelLockoutSettings): void {
    const r = toRaw(s);
    inputs.enabled.checked = r.enabled;
    inputs.useExponentialBackoff.checked = r.useExponentialBackoff;
    inputs.errorCodes.value = r.errorCodes;
    inputs.baseCooldownMs.value = r.baseCooldownMs;
    inputs.maxCooldownMs.value = r.maxCooldownMs;
    inputs.maxBackoffSteps.value = r.maxBackoffSteps;
    for (const k of LOCKOUT_FIELDS) hints.get(k)!.textContent = hintText(k);
  }

  function refresh(): { patch: ReturnType<typeof lockoutPatch>; errors: Map<LockoutField, string>; changed: number } {
    const { values, errors } = validateLockout(raw());
    for (const k of LOCKOUT_FIELDS) setFieldError(inputs[k], slots.get(k)!, submitted || touched.has(k) ? (errors.get(k) ?? null) : null);
    const changes = baseline ? lockoutChanges(baseline, values) : {};
    const changed = Object.keys(changes).length;
    for (const k of LOCKOUT_FIELDS) inputs[k].closest('.field')?.classList.toggle('field-changed', k in changes || errors.has(k));
    dirtyNote.textContent =
      changed || errors.size ? `${changed} unsaved change${changed === 1 ? '' : 's'}${errors.size ? `, ${errors.size} to fix` : ''}` : 'No unsaved changes';
    discardBtn.disabled = changed === 0 && errors.size === 0;
    const full = { ...(baseline ?? LOCKOUT_DEFAULTS), ...values };
    const steps = errors.size ? [] : backoffLadder(full);
    ladder.textContent = errors.size
      ? ''
      : !full.enabled
        ? 'Lockout is off: nothing is locked.'
        : `A model that keeps failing is locked for ${steps.map((ms) => formatDuration(ms)).join(' → ')}${steps.length > 1 ? ', then stays at the maximum' : ' each time'}.`;
    return { patch: baseline ? lockoutPatch(baseline, values) : null, errors, changed };
  }

  function isDirty(): boolean {
    if (!baseline) return false;
    const { values, errors } = validateLockout(raw());
    return errors.size > 0 || Object.keys(lockoutChanges(baseline, values)).length > 0;
  }

  function reset(to: ModelLockoutSettings): void {
    submitted = false;
    touched.clear();
    fill(to);
    refresh();
  }

  async function load(quiet = false): Promise<void> {
    if (!quiet || !baseline) clear(formArea, loading('Loading lockout settings…'));
    reloadBtn.disabled = true;
    try {
      const doc = await endpoints.getResilience(ctx.signal);
      if (ctx.signal.aborted) return;
      if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('The gateway returned settings that are not an object.');
      baseline = readLockout(doc);
      if (!formArea.contains(form)) clear(formArea, form);
      reset(baseline);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      baseline = null;
      clear(formArea, errorBox(err, () => void load()));
    } finally {
      reloadBtn.disabled = false;
    }
  }

  async function save(): Promise<void> {
    if (!baseline || saving) return;
    submitted = true;
    formStatus.replaceChildren();
    const { patch, errors } = refresh();
    if (errors.size) {
      clear(formStatus, h('p', { class: 'form-error', role: 'alert' }, `Fix ${errors.size} field${errors.size === 1 ? '' : 's'} before saving.`));
      inputs[LOCKOUT_FIELDS.find((k) => errors.has(k))!].focus();
      return;
    }
    if (!patch) {
      clear(formStatus, notice('No changes to save.', 'info'));
      return;
    }
    const sent = (patch['modelLockout'] ?? {}) as Partial<ModelLockoutSettings>;
    saving = true;
    const outcome = await saveResilience(patch, [saveBtn, discardBtn, defaultsBtn], saveBtn);
    saving = false;
    if (ctx.signal.aborted) return;
    if ('err' in outcome) {
      const err = outcome.err;
      const k = err instanceof ApiError ? fieldForLockoutParam(err.param) : undefined;
      if (err instanceof ApiError && k) {
        setFieldError(inputs[k], slots.get(k)!, `${err.message} (${err.code})`);
        inputs[k].focus();
        clear(formStatus, h('p', { class: 'form-error', role: 'alert' }, 'The gateway rejected a value; see the highlighted field.'));
      } else {
        clear(formStatus, errorBox(err));
      }
      return;
    }
    const saved = outcome.saved && typeof outcome.saved === 'object' ? readLockout(outcome.saved) : { ...baseline, ...sent };
    const adjusted = adjustedFields(sent, saved);
    const count = Object.keys(sent).length;
    baseline = saved;
    reset(saved);
    clear(
      formStatus,
      h(
        'div',
        { class: 'alert alert-success', role: 'status', 'data-testid': 'saved' },
        `Saved ${count} change${count === 1 ? '' : 's'}.`,
        adjusted.length
          ? h('ul', null, adjusted.map((k) => h('li', null, `${LABEL[k]} was adjusted to ${toRaw(saved)[k]} (allowed range).`)))
          : null,
      ),
    );
    saveBtn.focus();
  }

  discardBtn.addEventListener('click', () => {
    if (!baseline) return;
    reset(baseline);
    clear(formStatus, notice('Changes discarded.', 'info'));
    saveBtn.focus();
  });

  defaultsBtn.addEventListener('click', () => {
    fill({ ...LOCKOUT_DEFAULTS, errorCodes: [...LOCKOUT_DEFAULTS.errorCodes] });
    for (const k of LOCKOUT_FIELDS) touched.add(k);
    const { changed } = refresh();
    clear(formStatus, notice(changed ? 'Defaults filled in; save to apply them.' : 'These are already the defaults.', 'info'));
  });

  reloadBtn.addEventListener('click', () => {
    if (isDirty()) clear(message, notice('Reloaded; unsaved changes were dropped.', 'info'));
    else message.replaceChildren();
    formStatus.replaceChildren();
    void load();
  });

  const unsubscribe = live.subscribe('settings', async (ev) => {
    if (ev.data.section !== 'resilience' || saving || !baseline) return;
    try {
      const next = readLockout(await endpoints.getResilience(ctx.signal));
      if (ctx.signal.aborted || saving || JSON.stringify(next) === JSON.stringify(baseline)) return;
      if (isDirty()) {
        const reload = h('button', { type: 'button', class: 'btn btn-small' }, 'Reload now');
        reload.addEventListener('click', () => {
          message.replaceChildren();
          void load();
        });
        clear(message, h('div', { class: 'alert alert-info', role: 'status' }, 'The lockout settings were changed elsewhere. ', reload));
      } else {
        baseline = next;
        reset(next);
        clear(message, notice('Lockout settings were changed elsewhere; showing the current values.', 'info'));
      }
    } catch {
      /* the next reload shows any error */
    }
  });

  void load();
  return unsubscribe;
}
