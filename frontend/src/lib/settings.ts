// The Settings page's pure parts (issue 42 item 9): the catalogue of every
// general setting (settings-catalogue.json, checked against the gateway's
// defaults by backend/config's TestEverySettingHasAPlaceOnTheSettingsPage),
// reading a settings document by dotted key, the keys that have no place,
// form values ↔ settings values with the catalogue's ranges, and the partial
// PATCH of the changed keys. Unit-tested in tests/unit/settings.test.ts.

import catalogue from './settings-catalogue.json';
import { formatDuration } from './format';

export type SettingKind = 'bool' | 'int' | 'ms' | 'bytes' | 'text' | 'enum' | 'list' | 'page';

export interface SettingEntry {
  key: string;
  group: string;
  label: string;
  kind: SettingKind;
  description: string;
  default: unknown;
  min?: number;
  max?: number;
  options?: string[];
  link?: { page: string; label: string };
}

export const SETTING_GROUPS: readonly string[] = catalogue.groups;
export const SETTINGS: readonly SettingEntry[] = catalogue.settings as SettingEntry[];

/** The form control's raw value: a checkbox's state or an input's text. */
export type RawValue = boolean | string;

/** The id of a setting's control: "team.limits" → "set-team-limits". */
export function settingId(key: string): string {
  return `set-${key.replace(/[^A-Za-z0-9]+/g, '-')}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A settings document's value at a dotted key (undefined when absent). */
export function settingAt(doc: unknown, key: string): unknown {
  let cur: unknown = doc;
  for (const part of key.split('.')) {
    if (!isObject(cur) || !(part in cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** Every dotted key of a settings document: objects by their fields, anything else (lists included) as a leaf. */
export function settingKeys(doc: unknown, prefix = ''): string[] {
  if (!isObject(doc)) return prefix ? [prefix] : [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(doc)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (isObject(v)) out.push(...settingKeys(v, key));
    else out.push(key);
  }
  return out;
}

/** The catalogue entry that places a key: its own, or an ancestor's (edited on another page). */
export function entryFor(key: string, entries: readonly SettingEntry[] = SETTINGS): SettingEntry | undefined {
  for (let k = key; k; k = k.includes('.') ? k.slice(0, k.lastIndexOf('.')) : '') {
    const e = entries.find((x) => x.key === k);
    if (e) return e;
  }
  return undefined;
}

/** The keys of a settings document that have no place on the page (none, when the catalogue is complete). */
export function unplacedKeys(doc: unknown, entries: readonly SettingEntry[] = SETTINGS): string[] {
  return settingKeys(doc).filter((k) => !entryFor(k, entries));
}

/** 33554432 → "32 MiB". */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
}

/** A value in words: "on", "2 min (120000 ms)", "32 MiB", "none", "“shared”". */
export function describeSetting(e: SettingEntry, v: unknown): string {
  switch (e.kind) {
    case 'bool':
      return v ? 'on' : 'off';
    case 'ms':
      return typeof v === 'number' ? (v === 0 && e.min === 0 ? 'off (0)' : `${formatDuration(v)} (${v} ms)`) : String(v);
    case 'bytes':
      return typeof v === 'number' ? `${formatBytes(v)} (${v} bytes)` : String(v);
    case 'int':
      return typeof v === 'number' ? v.toLocaleString('en-US') : String(v);
    case 'list':
      return Array.isArray(v) && v.length ? v.join(', ') : 'none';
    case 'text':
    case 'enum':
      return typeof v === 'string' && v !== '' ? v : 'none';
    case 'page':
      return JSON.stringify(v);
  }
}

/** A setting's value as its control shows it. */
export function toRawValue(e: SettingEntry, v: unknown): RawValue {
  if (e.kind === 'bool') return v === true;
  if (e.kind === 'list') return Array.isArray(v) ? v.join('\n') : '';
  if (v == null) return '';
  return String(v);
}

/** A control's value read back with the catalogue's kind and range: the value, or the sentence to show under it. */
export function fromRawValue(e: SettingEntry, raw: RawValue): { value: unknown } | { error: string } {
  if (e.kind === 'bool') return { value: raw === true };
  const text = String(raw).trim();
  if (e.kind === 'list') return { value: text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean) };
  if (e.kind === 'text') return { value: text };
  if (e.kind === 'enum') return e.options?.includes(text) ? { value: text } : { error: `Choose one of ${(e.options ?? []).join(', ')}.` };
  if (e.kind === 'page') return { error: 'Edited on another page.' };
  const unit = e.kind === 'ms' ? ' ms' : e.kind === 'bytes' ? ' bytes' : '';
  if (text === '' || !/^-?\d+$/.test(text)) return { error: `Enter a whole number${unit ? ` of${unit}` : ''}.` };
  const n = Number(text);
  if (e.min !== undefined && e.max !== undefined && (n < e.min || n > e.max)) {
    return { error: `Must be ${e.min.toLocaleString('en-US')} to ${e.max.toLocaleString('en-US')}${unit}.` };
  }
  return { value: n };
}

/** The partial PATCH /api/settings body of the changed keys: dotted keys become nested objects. */
export function settingsPatch(changes: ReadonlyMap<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of changes) {
    const parts = key.split('.');
    let cur = out;
    for (const p of parts.slice(0, -1)) {
      if (!isObject(cur[p])) cur[p] = {};
      cur = cur[p] as Record<string, unknown>;
    }
    cur[parts[parts.length - 1]!] = value;
  }
  return out;
}

/** The entry a server error's param names ("team.limits", "trustedProxies"; a deeper param falls back to its ancestor). */
export function entryForParam(param: string | undefined, entries: readonly SettingEntry[] = SETTINGS): SettingEntry | undefined {
  if (!param) return undefined;
  return entryFor(param, entries);
}
