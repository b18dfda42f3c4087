/**
 * A provider's connection form as data: the catalogue (GET
 * /api/providers/catalog) says how its apiKey is asked for (keyField) and
 * what its providerSpecificData holds (dataFields); these pure functions
 * turn what was typed into the API's body, with an error per field, map the
 * API's error param back to its field and write a connection's row summary.
 * No provider is named here: every form comes from its schema.
 */

/** How a control shows a field (backend/providers FieldKind). */
export type FieldKind = 'text' | 'url' | 'secret' | 'select' | 'boolean' | 'json' | 'map' | 'file' | 'none';

/** One providerSpecificData field of a provider's schema. */
export interface DataField {
  name: string;
  type: string;
  required: boolean;
  secret: boolean;
  doc: string;
  label?: string;
  kind?: FieldKind | string;
  options?: string[];
  default?: string;
  placeholder?: string;
  /** The gateway's own (filled on save): shown, never sent. */
  readOnly?: boolean;
  /** The word the row shows the value after ("project"). */
  summary?: string;
  /** Optional once this other field is set. */
  requiredUnless?: string;
  /** "apiKey": the value becomes the connection's key (an apiKey error is about it). */
  sealedAs?: string;
  mapKey?: string;
  mapValue?: string;
}

/** How the form asks for the apiKey. */
export interface KeyField {
  kind: 'secret' | 'file' | 'none' | string;
  label: string;
  doc: string;
  accept?: string;
  required: boolean;
}

/** A catalogue row, as far as a connection form needs it. */
export interface CatalogProvider {
  id: string;
  name: string;
  aliases?: string[];
  category?: string;
  userDefined?: boolean;
  baseUrl?: string;
  dataFields?: DataField[];
  keyField?: KeyField;
}

/** The key field of a provider the catalogue does not describe (an older gateway, a free-typed id). */
export const DEFAULT_KEY: KeyField = { kind: 'secret', label: 'API key', doc: 'Stored by the gateway; it is never shown again.', required: true };

/** The catalogue row a typed provider id (or alias) names. */
export function findProvider(catalog: CatalogProvider[], typed: string): CatalogProvider | undefined {
  const t = typed.trim().toLowerCase();
  if (!t) return undefined;
  return catalog.find((p) => p.id.toLowerCase() === t || (p.aliases ?? []).some((a) => a.toLowerCase() === t));
}

/** Providers a connection is added to with a key (logins have their own panel). */
export function addableProviders(catalog: CatalogProvider[]): CatalogProvider[] {
  return catalog.filter((p) => p.category !== 'oauth');
}

export function keyFieldOf(p: CatalogProvider | undefined): KeyField {
  return p?.keyField ?? DEFAULT_KEY;
}

/** A provider whose connections must name their endpoint. */
export function needsBaseUrl(p: CatalogProvider | undefined): boolean {
  return p?.userDefined === true;
}

export function kindOf(f: DataField): FieldKind {
  const k = (f.kind ?? '') as FieldKind;
  if (k) return k;
  if (f.secret) return 'secret';
  if (f.type === 'object') return 'json';
  if (f.type === 'boolean') return 'boolean';
  return 'text';
}

export const labelOf = (f: DataField): string => f.label || f.name;

/** The fields a form shows: every field, read-only ones only when editing. */
export function formFields(p: CatalogProvider | undefined, mode: 'add' | 'edit'): DataField[] {
  return (p?.dataFields ?? []).filter((f) => mode === 'edit' || !f.readOnly);
}

/** A stored value as its control shows it (secrets never: they are not returned). */
export function displayValue(f: DataField, v: unknown): string {
  if (v == null || f.secret) return '';
  switch (kindOf(f)) {
    case 'map':
      return v && typeof v === 'object'
        ? Object.entries(v as Record<string, unknown>)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, val]) => `${k} = ${String(val)}`)
            .join('\n')
        : '';
    case 'json':
      return JSON.stringify(v, null, 2);
    case 'boolean':
      return v === true ? 'true' : 'false';
    default:
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
}

/** "a = b" lines (or "a=b", "a: b") as an object; the first bad line is the error. */
export function parseMap(text: string, f: DataField): { value: Record<string, string> } | { error: string } {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    const m = /^([^=:]+?)\s*[=:]\s*(.+)$/.exec(line);
    if (!m) return { error: `Line ${i + 1}: write ${f.mapKey || 'name'} = ${f.mapValue || 'value'}.` };
    const k = m[1]!.trim();
    if (k in out) return { error: `Line ${i + 1}: “${k}” is listed twice.` };
    out[k] = m[2]!.trim();
  }
  return { value: out };
}

/** What the form's controls hold: the key's text (typed or read from its file) and each field's text. */
export interface FormValues {
  key: string;
  /** For a file key: whether a file was chosen (its text may be empty). */
  keyChosen?: boolean;
  values: Record<string, string>;
}

export interface FieldProblem {
  /** "apiKey" or a data field's name. */
  field: string;
  message: string;
}

export interface Collected {
  apiKey?: string;
  /** The object to send (the whole object, base merged), absent when nothing changed. */
  providerSpecificData?: Record<string, unknown>;
  errors: FieldProblem[];
}

/**
 * The body parts a provider form sends. Add: set fields only, every
 * required one present (unless its requiredUnless field is set). Edit:
 * the base object (the connection's own, secrets never in it) with the
 * edited fields; a secret left empty is kept by the gateway, so it is not
 * sent; the object is sent only when it changed.
 */
export function collect(p: CatalogProvider | undefined, mode: 'add' | 'edit', input: FormValues, base: Record<string, unknown> = {}): Collected {
  const errors: FieldProblem[] = [];
  const out: Collected = { errors };
  const key = keyFieldOf(p);
  if (key.kind !== 'none') {
    const text = key.kind === 'file' ? input.key : input.key.trim();
    if (text) {
      if (key.kind === 'file' && /json/i.test(key.accept ?? '') && !isJSON(text)) {
        errors.push({ field: 'apiKey', message: 'That file is not JSON: choose the key file itself.' });
      } else {
        out.apiKey = text;
      }
    } else if (mode === 'add' && key.required) {
      errors.push({ field: 'apiKey', message: key.kind === 'file' ? `Choose the ${key.label} file.` : `Enter the ${key.label}.` });
    }
  }
  const fields = formFields(p, mode).filter((f) => !f.readOnly);
  const set = (name: string) => (input.values[name] ?? '').trim() !== '';
  const data: Record<string, unknown> = mode === 'edit' ? { ...base } : {};
  let touched = false;
  for (const f of fields) {
    const raw = input.values[f.name] ?? '';
    const text = raw.trim();
    const kind = kindOf(f);
    if (kind === 'boolean') {
      const on = text === 'true';
      if (mode === 'add' ? on : (data[f.name] === true) !== on) {
        data[f.name] = on;
        touched = true;
      }
      continue;
    }
    if (!text) {
      const requiredNow = f.required && !(f.requiredUnless && set(f.requiredUnless));
      if (mode === 'add' && requiredNow) errors.push({ field: f.name, message: `Enter the ${labelOf(f)}.` });
      // An edit: a secret left empty is kept; another emptied field goes.
      if (mode === 'edit' && !f.secret && f.name in data) {
        delete data[f.name];
        touched = true;
      }
      continue;
    }
    let value: unknown = text;
    if (kind === 'url' && !/^https?:\/\/[^\s/]+/i.test(text)) {
      errors.push({ field: f.name, message: 'Enter an http(s) URL.' });
      continue;
    }
    if (kind === 'select' && f.options?.length && !f.options.includes(text)) {
      errors.push({ field: f.name, message: `Choose one of ${f.options.join(', ')}.` });
      continue;
    }
    if (kind === 'json') {
      try {
        value = JSON.parse(text);
      } catch {
        errors.push({ field: f.name, message: 'Enter valid JSON.' });
        continue;
      }
    }
    if (kind === 'map') {
      const m = parseMap(raw, f);
      if ('error' in m) {
        errors.push({ field: f.name, message: m.error });
        continue;
      }
      value = m.value;
    }
    if (JSON.stringify(data[f.name]) !== JSON.stringify(value)) touched = true;
    data[f.name] = value;
  }
  if (mode === 'add' ? Object.keys(data).length > 0 : touched) out.providerSpecificData = data;
  return out;
}

function isJSON(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/**
 * The form field an API error's param names: "apiKey" (the key control, or
 * the data field sealed as the key), "providerSpecificData.<name>…" (that
 * field), "providerSpecificData" (the first field the form asks for).
 */
export function fieldForParam(p: CatalogProvider | undefined, param: string | undefined): string | undefined {
  if (!param) return undefined;
  const fields = p?.dataFields ?? [];
  if (param === 'apiKey') {
    if (keyFieldOf(p).kind !== 'none') return 'apiKey';
    return fields.find((f) => f.sealedAs === 'apiKey')?.name;
  }
  const m = /^providerSpecificData(?:\.([^.[\]]+))?/.exec(param);
  if (!m) return undefined;
  if (!m[1]) return fields.find((f) => !f.readOnly)?.name;
  return fields.find((f) => f.name === m[1] && !f.readOnly)?.name;
}

/**
 * The row's account line: an OAuth login's account, then each field the
 * schema puts on the row ("project p-1"); null when there is nothing to say.
 */
export function summaryLine(c: { authType?: string; providerSpecificData?: unknown }, p: CatalogProvider | undefined): string | null {
  const d = c.providerSpecificData && typeof c.providerSpecificData === 'object' ? (c.providerSpecificData as Record<string, unknown>) : {};
  const text = (k: string) => (typeof d[k] === 'string' ? (d[k] as string).trim() : '');
  const parts: string[] = [];
  if (c.authType === 'oauth') {
    const who = text('email') || text('accountId');
    if (who) parts.push(`account ${who}`);
  }
  for (const f of p?.dataFields ?? []) {
    if (f.summary && !f.secret && text(f.name)) parts.push(`${f.summary} ${text(f.name)}`);
  }
  return parts.length ? parts.join(' · ') : null;
}
