// Settings (issue 42 item 9): every general setting of GET /api/settings in
// one place, grouped, each with its meaning, its default and its current
// value, edited through PATCH /api/settings (only the changed keys), the
// gateway's validation error shown under the field its `param` names. The
// list is src/lib/settings-catalogue.json; a key the gateway returns that the
// list lacks is shown under "Not described yet" (and fails
// backend/config's TestEverySettingHasAPlaceOnTheSettingsPage). The other
// settings documents keep their own pages, linked from here.

import { ApiError, endpoints, isAbortError, type GeneralSettings } from '../api';
import { busy, clear, errorBox, h, loading, notice, setFieldError } from '../dom';
import {
  SETTINGS,
  SETTING_GROUPS,
  describeSetting,
  entryForParam,
  fromRawValue,
  settingAt,
  settingId,
  settingsPatch,
  toRawValue,
  unplacedKeys,
  type SettingEntry,
} from '../lib/settings';
import { href, type ViewContext } from '../router';
import { deny, whyNot } from './role-gate';

/** The other pages that hold settings of their own. */
const OTHER_PAGES: ReadonlyArray<[string, string, string]> = [
  ['/resilience', 'Resilience Settings', 'breakers, cooldowns, retries, rate limits'],
  ['/lockout-settings', 'Lockout Settings', 'when a failing model is locked out'],
  ['/cooldowns', 'Cooldown Manager', 'the most-tuned cooldown rules'],
  ['/logs', 'Logs', 'body capture (which requests keep their bodies)'],
  ['/feature-flags', 'Feature Flags', 'live switches'],
  ['/rules', 'Rules', 'provider error rules'],
  ['/backup', 'Backup & Restore', 'all settings in one file'],
];

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export function renderSettings(root: HTMLElement, ctx: ViewContext): void {
  // Whether this session may save: the gateway's route table decides (GET /api/session `routes`).
  const denied = whyNot('PATCH /api/settings');
  const canEdit = !denied;
  let baseline: GeneralSettings | null = null;
  const controls = new Map<string, Control>();
  const slots = new Map<string, HTMLElement>();
  const currents = new Map<string, HTMLElement>();
  /** The gateway's refusal of a field, kept under it until that field changes. */
  const serverErrors = new Map<string, string>();

  const heading = h('h1', { tabindex: '-1' }, 'Settings');
  const reloadBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Reload');
  const area = h('div', { class: 'list-area' });
  clear(
    root,
    h('div', { class: 'page-head' }, heading, reloadBtn),
    h(
      'p',
      { class: 'muted page-intro' },
      'Every setting of the gateway, with what it does and its default. Changes apply to the next request. Settings with a page of their own: ',
      OTHER_PAGES.map(([path, title, what], i) => [i ? ', ' : '', h('a', { href: href(path) }, title), ` (${what})`]),
      '.',
    ),
    canEdit ? null : h('p', { class: 'alert alert-info', role: 'status', 'data-testid': 'settings-readonly' }, `Changing settings: ${denied} You see them read-only.`),
    area,
  );

  const saveBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save changes');
  const discardBtn = h('button', { type: 'button', class: 'btn' }, 'Discard changes');
  const dirtyNote = h('span', { class: 'muted small', 'aria-live': 'polite' });
  const formStatus = h('div', { class: 'form-status', 'aria-live': 'polite' });

  function control(e: SettingEntry): Control {
    const id = settingId(e.key);
    const common = { id, name: e.key, 'data-key': e.key, 'aria-describedby': `${id}-hint`, disabled: !canEdit };
    if (e.kind === 'bool') return h('input', { ...common, type: 'checkbox' });
    if (e.kind === 'enum') return h('select', common, (e.options ?? []).map((o) => h('option', { value: o }, o)));
    if (e.kind === 'list') return h('textarea', { ...common, rows: 3, spellcheck: 'false', placeholder: 'one per line' });
    const numeric = e.kind === 'int' || e.kind === 'ms' || e.kind === 'bytes';
    return h('input', { ...common, type: 'text', inputmode: numeric ? 'numeric' : 'text', autocomplete: 'off', spellcheck: 'false' });
  }

  function fieldEl(e: SettingEntry): HTMLElement {
    const id = settingId(e.key);
    const current = h('span', { class: 'setting-current' });
    currents.set(e.key, current);
    const hint = h(
      'small',
      { id: `${id}-hint`, class: 'hint' },
      e.description,
      ' ',
      h('span', { class: 'setting-default', 'data-testid': 'setting-default' }, `Default: ${describeSetting(e, e.default)}.`),
      ' ',
      current,
      e.link ? [' ', h('a', { href: href(e.link.page) }, e.link.label)] : null,
    );
    const wrap = (...kids: Array<HTMLElement | string | null>) =>
      h('div', { class: `field field-wide${e.kind === 'bool' ? ' field-check' : ''}`, 'data-setting': e.key }, ...kids);
    if (e.kind === 'page') return wrap(h('span', { class: 'setting-label', id: `${id}-label` }, e.label, ' ', h('code', { class: 'muted small' }, e.key)), hint);
    const input = control(e);
    controls.set(e.key, input);
    const slot = h('small', { id: `${id}-error`, class: 'field-error' });
    slots.set(e.key, slot);
    const name = h('code', { class: 'muted small' }, e.key);
    if (e.kind === 'bool') return wrap(h('label', { for: id }, input, ' ', e.label, ' ', name), hint, slot);
    return wrap(h('label', { for: id }, e.label, ' ', name), input, hint, slot);
  }

  const form = h(
    'form',
    { class: 'settings-form', novalidate: true, 'data-testid': 'settings-form' },
    SETTING_GROUPS.map((g) => {
      const inGroup = SETTINGS.filter((e) => e.group === g);
      if (!inGroup.length) return null;
      const gid = `set-group-${g.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
      return h(
        'fieldset',
        { class: 'card settings-section', 'aria-labelledby': gid },
        h('legend', { class: 'section-legend', id: gid }, g),
        h('div', { class: 'form-grid' }, inGroup.map(fieldEl)),
      );
    }),
    canEdit ? h('div', { class: 'form-footer' }, h('div', { class: 'form-actions' }, saveBtn, discardBtn, dirtyNote), formStatus) : null,
  );
  // Read-only for this role: each control disabled with the reason as its title.
  if (denied) for (const c of controls.values()) deny(c, denied);
  const unplacedArea = h('div');

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void save();
  });
  form.addEventListener('input', (ev) => {
    const key = (ev.target as HTMLElement).dataset['key'];
    if (key) serverErrors.delete(key);
    formStatus.replaceChildren();
    refresh(false);
  });
  form.addEventListener('change', () => refresh(false));

  function raw(c: Control): boolean | string {
    return c instanceof HTMLInputElement && c.type === 'checkbox' ? c.checked : c.value;
  }

  /** The changed keys and the fields to fix; errors are shown when `show` (or on a field already marked). */
  function refresh(show: boolean): { changes: Map<string, unknown>; errors: Map<string, string> } {
    const changes = new Map<string, unknown>();
    const errors = new Map<string, string>();
    for (const [key, c] of controls) {
      const e = SETTINGS.find((x) => x.key === key)!;
      const r = fromRawValue(e, raw(c));
      const slot = slots.get(key)!;
      if ('error' in r) {
        errors.set(key, r.error);
        if (show || c.getAttribute('aria-invalid') === 'true' || document.activeElement !== c) setFieldError(c, slot, r.error);
        continue;
      }
      setFieldError(c, slot, serverErrors.get(key) ?? null);
      const before = settingAt(baseline, key);
      const changed = JSON.stringify(r.value) !== JSON.stringify(before);
      if (changed) changes.set(key, r.value);
      c.closest('.field')?.classList.toggle('field-changed', changed);
    }
    dirtyNote.textContent =
      changes.size || errors.size
        ? `${changes.size} unsaved change${changes.size === 1 ? '' : 's'}${errors.size ? `, ${errors.size} to fix` : ''}`
        : 'No unsaved changes';
    discardBtn.disabled = changes.size === 0 && errors.size === 0;
    return { changes, errors };
  }

  function fill(doc: GeneralSettings): void {
    for (const e of SETTINGS) {
      const v = settingAt(doc, e.key);
      currents.get(e.key)!.textContent = v === undefined ? 'Not returned by this gateway.' : `Now: ${describeSetting(e, v)}.`;
      const c = controls.get(e.key);
      if (!c) continue;
      const r = toRawValue(e, v);
      if (c instanceof HTMLInputElement && c.type === 'checkbox') c.checked = r === true;
      else c.value = String(r);
      serverErrors.delete(e.key);
      setFieldError(c, slots.get(e.key)!, null);
      c.closest('.field')?.classList.remove('field-changed');
    }
    // A key the gateway returns that this page does not know: shown, never hidden.
    const unknown = unplacedKeys(doc);
    clear(
      unplacedArea,
      unknown.length
        ? h(
            'section',
            { class: 'card', 'data-testid': 'settings-unplaced', 'aria-labelledby': 'set-unplaced-title' },
            h('h2', { id: 'set-unplaced-title' }, 'Not described yet'),
            h('p', { class: 'muted' }, 'The gateway returns these settings, but this page does not know them yet (see the API reference).'),
            h('ul', null, unknown.map((k) => h('li', null, h('code', null, k), ': ', JSON.stringify(settingAt(doc, k))))),
          )
        : null,
    );
    refresh(false);
  }

  async function load(): Promise<void> {
    if (!baseline) clear(area, loading('Loading settings…'));
    reloadBtn.disabled = true;
    try {
      const doc = await endpoints.getSettings(ctx.signal);
      if (ctx.signal.aborted) return;
      baseline = doc;
      if (!area.contains(form)) clear(area, form, unplacedArea);
      fill(doc);
      focusFromParams();
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      baseline = null;
      clear(area, errorBox(err, () => void load()));
    } finally {
      reloadBtn.disabled = false;
    }
  }

  /** `#/settings?focus=updateCheck` (the Overview's link) scrolls to and focuses that setting. */
  function focusFromParams(): void {
    const key = ctx.params.get('focus');
    const el = key ? form.querySelector<HTMLElement>(`[data-setting="${CSS.escape(key)}"]`) : null;
    if (!el) return;
    el.scrollIntoView({ block: 'center' });
    (controls.get(key!) ?? el).focus();
  }

  async function save(): Promise<void> {
    if (!baseline) return;
    formStatus.replaceChildren();
    const { changes, errors } = refresh(true);
    if (errors.size) {
      clear(formStatus, h('p', { class: 'form-error', role: 'alert' }, `Fix ${errors.size} field${errors.size === 1 ? '' : 's'} before saving.`));
      controls.get([...errors.keys()][0]!)?.focus();
      return;
    }
    if (!changes.size) {
      clear(formStatus, notice('No changes to save.', 'info'));
      return;
    }
    const outcome = await busy([saveBtn, discardBtn], async () => {
      try {
        return { saved: await endpoints.patchSettings(settingsPatch(changes)) };
      } catch (err) {
        return { err };
      }
    }, { button: saveBtn, label: 'Saving…' });
    if (ctx.signal.aborted) return;
    if ('err' in outcome) {
      const err = outcome.err;
      const e = err instanceof ApiError ? entryForParam(err.param) : undefined;
      const c = e ? controls.get(e.key) : undefined;
      if (err instanceof ApiError && e && c) {
        serverErrors.set(e.key, `${err.message} (${err.code})`);
        setFieldError(c, slots.get(e.key)!, serverErrors.get(e.key)!);
        c.focus();
        clear(formStatus, h('p', { class: 'form-error', role: 'alert' }, `The gateway refused “${e.label}”; see the message under it. Nothing was saved.`));
      } else {
        clear(formStatus, errorBox(err));
      }
      return;
    }
    baseline = outcome.saved;
    fill(outcome.saved);
    clear(formStatus, h('div', { class: 'alert alert-success', role: 'status', 'data-testid': 'saved' }, `Saved ${changes.size} change${changes.size === 1 ? '' : 's'}.`));
    saveBtn.focus();
  }

  discardBtn.addEventListener('click', () => {
    if (!baseline) return;
    fill(baseline);
    clear(formStatus, notice('Changes discarded.', 'info'));
  });
  reloadBtn.addEventListener('click', () => {
    formStatus.replaceChildren();
    void load();
  });

  void load();
}
