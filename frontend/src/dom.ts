// Small DOM helpers. Everything is built with createElement/textContent, never
// innerHTML, so text that comes from the gateway is never parsed as markup.

import { describeError } from './api';

type AttrValue = string | number | boolean | null | undefined;
type Handler = (ev: Event) => void;
export type Attrs = { [name: string]: AttrValue | Handler };
export type Child = Node | string | number | null | undefined | false | Child[];

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (typeof value === 'function') {
        el.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
      } else if (value === true) {
        el.setAttribute(name, '');
      } else if (value !== false && value != null) {
        el.setAttribute(name === 'className' ? 'class' : name, String(value));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child == null || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function clear(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** An error as shown to a person: the message, and the code in small text. */
export function errorBox(err: unknown, retry?: () => void): HTMLElement {
  const { message, code } = describeError(err);
  return h(
    'div',
    { class: 'alert alert-error', role: 'alert' },
    h('p', { class: 'alert-message' }, message),
    code ? h('small', { class: 'alert-code' }, code) : null,
    retry ? h('button', { type: 'button', class: 'btn btn-small', onclick: retry }, 'Try again') : null,
  );
}

export function notice(text: string, kind: 'success' | 'info' = 'info'): HTMLElement {
  return h('div', { class: `alert alert-${kind}`, role: 'status' }, text);
}

export function loading(text: string): HTMLElement {
  return h('p', { class: 'loading', role: 'status', 'aria-live': 'polite' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text);
}

export function emptyState(title: string, hint?: string): HTMLElement {
  return h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, title), hint ? h('p', { class: 'muted' }, hint) : null);
}

export type Tone = 'ok' | 'warn' | 'bad' | 'muted';

export function badge(text: string, tone: Tone, title?: string): HTMLElement {
  return h('span', { class: `badge badge-${tone}`, title: title ?? null }, text);
}

/**
 * Runs `fn` with the given controls disabled and marked busy, so a request
 * cannot be sent twice. The label of `primary` changes while it runs.
 */
export async function busy<T>(
  controls: Array<HTMLButtonElement | HTMLFieldSetElement>,
  fn: () => Promise<T>,
  primary?: { button: HTMLButtonElement; label: string },
): Promise<T> {
  const oldLabel = primary?.button.textContent ?? '';
  for (const c of controls) {
    c.disabled = true;
    c.setAttribute('aria-busy', 'true');
  }
  if (primary) primary.button.textContent = primary.label;
  try {
    return await fn();
  } finally {
    for (const c of controls) {
      c.disabled = false;
      c.removeAttribute('aria-busy');
    }
    if (primary) primary.button.textContent = oldLabel;
  }
}

/** A labelled form field: <label for> + control + optional hint. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string,
): HTMLElement {
  const hintId = hint ? `${control.id}-hint` : null;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label, control.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null),
    control,
    hint && hintId ? h('small', { id: hintId, class: 'hint' }, hint) : null,
  );
}

/** Dates from the API may be ISO strings, Unix seconds or milliseconds. */
export function parseTime(v: string | number | null | undefined): Date | null {
  if (v == null || v === '') return null;
  if (typeof v === 'number' || /^\d+$/.test(v)) {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) return null;
    return new Date(n < 1e12 ? n * 1000 : n);
  }
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function formatDate(v: string | number | null | undefined): string {
  const d = parseTime(v);
  return d ? d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';
}

export function formatTime(d: Date): string {
  return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/**
 * Asks for confirmation in an in-page <dialog>. window.confirm is not used:
 * some desktop webviews (Wails on macOS) silently return false from it.
 */
export function confirmDialog(opts: { title: string; message: string; confirmLabel: string; danger?: boolean }): Promise<boolean> {
  if (typeof HTMLDialogElement !== 'function') return Promise.resolve(window.confirm(opts.message));
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'btn', value: 'cancel' }, 'Cancel');
    const ok = h('button', { type: 'button', class: opts.danger ? 'btn btn-danger' : 'btn btn-primary' }, opts.confirmLabel);
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': 'dialog-title', 'aria-describedby': 'dialog-message' },
      h('h2', { id: 'dialog-title' }, opts.title),
      h('p', { id: 'dialog-message' }, opts.message),
      h('div', { class: 'dialog-actions' }, cancel, ok),
    );
    let result = false;
    cancel.addEventListener('click', () => dialog.close());
    ok.addEventListener('click', () => {
      result = true;
      dialog.close();
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(result);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    cancel.focus(); // the safe choice has focus, Enter does not delete
  });
}

/** Copies text; falls back to selecting it in `input` where the Clipboard API is unavailable. */
export async function copyText(text: string, input?: HTMLInputElement): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall through */
  }
  if (input) {
    input.focus();
    input.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
  return false;
}
