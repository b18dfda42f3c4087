/**
 * One connection form for every provider, rendered from its catalogue
 * schema (GET /api/providers/catalog: keyField and dataFields): the key as
 * a password field or a file (a service account's JSON key), each
 * providerSpecificData field as the control its kind asks for (text, URL,
 * secret, select, checkbox, JSON, a "name = value" map), with its label,
 * help, default and requiredness. Secrets are never shown back: an edit
 * says they are stored and replaces them only when something is typed.
 * An API error that names a field is shown under that field.
 */
import type { Connection } from '../api';
import { field, h, showFieldError } from '../dom';
import {
  collect,
  displayValue,
  fieldForParam,
  formFields,
  keyFieldOf,
  kindOf,
  labelOf,
  type CatalogProvider,
  type Collected,
  type DataField,
  type FieldProblem,
} from '../lib/provider-form';

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export interface ProviderForm {
  /** The fieldset (null: the provider asks for nothing of its own). */
  element: HTMLFieldSetElement | null;
  /** Same signature, same controls: a re-render is not needed. */
  signature: string;
  /** The control of "apiKey" or a data field. */
  control: (name: string) => Control | undefined;
  /** The control an API error's param names. */
  controlForParam: (param: string | undefined) => Control | undefined;
  /** What to send (edit: base is the object the edit starts from). */
  value: (base?: Record<string, unknown>) => Promise<Collected>;
  /** Marks each problem under its field; returns the first control. */
  showErrors: (errors: FieldProblem[]) => Control | undefined;
  clearErrors: () => void;
}

export interface ProviderFormOptions {
  mode: 'add' | 'edit';
  /** Control ids start with it ("conn", "edit"). */
  idPrefix: string;
  /** The connection an edit starts from. */
  connection?: Connection;
}

/** The schema parts that decide the controls. */
export function formSignature(p: CatalogProvider | undefined): string {
  return JSON.stringify([keyFieldOf(p), p?.dataFields ?? []]);
}

export function renderProviderForm(p: CatalogProvider | undefined, opts: ProviderFormOptions): ProviderForm {
  const { mode, idPrefix, connection: c } = opts;
  const stored = (c?.providerSpecificData && typeof c.providerSpecificData === 'object' ? c.providerSpecificData : {}) as Record<string, unknown>;
  const controls = new Map<string, Control>();
  const parts: HTMLElement[] = [];

  const key = keyFieldOf(p);
  let keyInput: HTMLInputElement | null = null;
  if (key.kind !== 'none') {
    const masked = c?.apiKeyMasked ? ` (${c.apiKeyMasked})` : '';
    keyInput =
      key.kind === 'file'
        ? h('input', { id: `${idPrefix}-apikey`, name: 'apiKey', type: 'file', accept: key.accept || null })
        : h('input', { id: `${idPrefix}-apikey`, name: 'apiKey', type: 'password', autocomplete: 'new-password', spellcheck: 'false' });
    const help = mode === 'edit' ? `Leave empty to keep the current key${masked}. New credentials (or a passing Test) also clear a banned, expired or out-of-credits state.` : key.doc;
    parts.push(marked(field(mode === 'edit' ? `New ${key.label}` : key.label, keyInput, help), mode === 'add' && key.required));
    controls.set('apiKey', keyInput);
  }

  for (const f of formFields(p, mode)) {
    const el = controlOf(f);
    controls.set(f.name, el);
    const unless = f.requiredUnless ? (p?.dataFields ?? []).find((x) => x.name === f.requiredUnless) : undefined;
    const help = [
      f.secret && mode === 'edit' ? 'Stored encrypted; leave empty to keep it.' : '',
      f.doc ? capital(f.doc).replace(/([^.])$/, '$1.') : '',
      f.default ? `Default: ${f.default}.` : '',
      unless ? `Not needed when ${labelOf(unless)} is set.` : '',
    ]
      .filter(Boolean)
      .join(' ');
    parts.push(marked(field(labelOf(f), el, help), mode === 'add' && f.required));
  }

  function controlOf(f: DataField): Control {
    const id = `${idPrefix}-psd-${f.name.toLowerCase()}`;
    const value = mode === 'edit' ? displayValue(f, stored[f.name]) : '';
    const common = { id, name: f.name, 'data-field': f.name, 'data-sealed-as': f.sealedAs || null, spellcheck: 'false', autocomplete: 'off' };
    if (f.readOnly) {
      const el = h('input', { ...common, readonly: true });
      el.value = value;
      return el;
    }
    switch (kindOf(f)) {
      case 'secret': {
        // The key column says whether the secret it holds is stored; other
        // sealed fields are never returned, so an edit only says they stay.
        const placeholder = mode === 'add' ? f.placeholder || null : f.sealedAs === 'apiKey' && c?.apiKeyMasked ? 'stored — replace' : 'unchanged unless typed';
        return h('input', { ...common, type: 'password', autocomplete: 'new-password', placeholder });
      }
      case 'select': {
        const el = h(
          'select',
          { id, name: f.name, 'data-field': f.name },
          h('option', { value: '' }, f.default ? `default (${f.default})` : '—'),
          (f.options ?? []).map((o) => h('option', { value: o }, o)),
        );
        el.value = value;
        return el;
      }
      case 'boolean': {
        const el = h('input', { id, name: f.name, 'data-field': f.name, type: 'checkbox' });
        el.checked = value === 'true';
        return el;
      }
      case 'json':
      case 'map': {
        const el = h('textarea', { ...common, rows: '3', placeholder: f.placeholder || null });
        el.value = value;
        return el;
      }
      default: {
        const el = h('input', { ...common, type: kindOf(f) === 'url' ? 'url' : 'text', placeholder: f.placeholder || f.default || null });
        el.value = value;
        return el;
      }
    }
  }

  const element = parts.length
    ? h(
        'fieldset',
        { class: mode === 'edit' ? 'form-grid form-grid-2' : 'form-grid', 'data-testid': 'provider-fields', 'data-provider': p?.id ?? '' },
        h('legend', null, p ? p.name : 'Credentials'),
        parts,
      )
    : null;

  const textOf = (el: Control): string => (el instanceof HTMLInputElement && el.type === 'checkbox' ? String(el.checked) : el.value);

  return {
    element,
    signature: formSignature(p),
    control: (name) => controls.get(name),
    controlForParam: (param) => {
      const name = fieldForParam(p, param);
      return name ? controls.get(name) : undefined;
    },
    value: async (base) => {
      const values: Record<string, string> = {};
      for (const [name, el] of controls) if (name !== 'apiKey') values[name] = textOf(el);
      let keyText = '';
      const file = keyInput?.type === 'file' ? keyInput.files?.[0] : undefined;
      if (file) keyText = await file.text();
      else if (keyInput && keyInput.type !== 'file') keyText = keyInput.value;
      return collect(p, mode, { key: keyText, keyChosen: Boolean(file), values }, base ?? stored);
    },
    showErrors: (errors) => {
      let first: Control | undefined;
      for (const e of errors) {
        const el = controls.get(e.field);
        if (!el) continue;
        showFieldError(el, e.message);
        first ??= el;
      }
      return first;
    },
    clearErrors: () => {
      for (const el of controls.values()) showFieldError(el, null);
    },
  };
}

/** A field's label with the required mark (the form checks requiredness itself: some fields are optional once another is set). */
function marked(wrapper: HTMLElement, required: boolean): HTMLElement {
  const label = wrapper.querySelector('label');
  if (required && label && !label.querySelector('.req')) label.append(h('span', { class: 'req', 'aria-hidden': 'true' }, ' *'));
  return wrapper;
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
