// Small DOM helpers. Everything is built with createElement/textContent, never
// innerHTML, so text that comes from the gateway is never parsed as markup.

import { describeError } from './lib/errors';
import type { Tone } from './lib/health';

export type { Tone } from './lib/health';

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
      c.disabled = Boolean(c.dataset['denied']); // a button the role may not use stays disabled
      c.removeAttribute('aria-busy');
    }
    if (primary) primary.button.textContent = oldLabel;
  }
}

/**
 * A labelled form field: <label for> + control + optional hint + an (empty)
 * error slot `#<control id>-error` that showFieldError fills.
 */
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
    h('small', { id: `${control.id}-error`, class: 'field-error' }),
  );
}

/** Shows (or, with null, clears) the message in a field() error slot. */
export function showFieldError(control: HTMLElement, message: string | null): void {
  const slot = control.closest('.field')?.querySelector<HTMLElement>('.field-error');
  if (slot) setFieldError(control, slot, message);
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

/** Copies text; falls back to a selected off-screen field where the Clipboard API is unavailable. */
export async function copyText(text: string, input?: HTMLInputElement): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall through */
  }
  const active = document.activeElement as HTMLElement | null;
  const temp = input ? null : h('textarea', { class: 'visually-hidden', readonly: true, 'aria-hidden': 'true', tabindex: '-1' });
  const target = input ?? temp!;
  if (temp) {
    temp.value = text;
    document.body.appendChild(temp);
  }
  target.focus();
  target.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    if (temp) {
      temp.remove();
      active?.focus();
    }
  }
}

/**
 * A "Copy" button for a value computed when clicked. The result is announced
 * in a small status text next to it (or in `status` if given).
 */
export function copyButton(getText: () => string, opts: { label?: string; ariaLabel?: string; status?: HTMLElement } = {}): HTMLElement {
  const label = opts.label ?? 'Copy';
  const btn = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': opts.ariaLabel ?? null }, label);
  const status = opts.status ?? h('span', { class: 'copy-note', role: 'status' });
  let timer = 0;
  btn.addEventListener('click', async () => {
    const ok = await copyText(getText());
    status.textContent = ok ? 'Copied' : 'Copy failed — select the text and copy it yourself';
    window.clearTimeout(timer);
    timer = window.setTimeout(() => (status.textContent = ''), 2500);
  });
  return opts.status ? btn : h('span', { class: 'copy-wrap' }, btn, status);
}

let dialogSeq = 0;

export interface DialogHandle {
  dialog: HTMLDialogElement;
  close: () => void;
}

/**
 * Opens a modal <dialog> with a title and content. Escape and the close button
 * close it (the native dialog "cancel" event); focus returns to the element
 * that had it. `onClose` runs once, after it is removed.
 */
export function openDialog(opts: { title: string; content: Child; wide?: boolean; onClose?: () => void; initialFocus?: HTMLElement }): DialogHandle {
  const id = `dlg-${++dialogSeq}`;
  const opener = document.activeElement as HTMLElement | null;
  const closeBtn = h('button', { type: 'button', class: 'btn btn-small btn-ghost dialog-x', 'aria-label': 'Close' }, '✕');
  const dialog = h(
    'dialog',
    { class: `dialog${opts.wide ? ' dialog-wide' : ''}`, 'aria-labelledby': `${id}-title` },
    h('div', { class: 'dialog-head' }, h('h2', { id: `${id}-title` }, opts.title), closeBtn),
    opts.content,
  );
  const close = () => {
    if (dialog.open) dialog.close();
  };
  closeBtn.addEventListener('click', close);
  dialog.addEventListener('close', () => {
    dialog.remove();
    opts.onClose?.();
    if (opener && opener.isConnected) opener.focus();
  });
  document.body.appendChild(dialog);
  if (typeof dialog.showModal === 'function') dialog.showModal();
  else dialog.setAttribute('open', '');
  (opts.initialFocus ?? dialog.querySelector<HTMLElement>('input, select, textarea, button:not(.dialog-x)') ?? closeBtn).focus();
  return { dialog, close };
}

/** An inline error slot for a form field, referenced by aria-describedby. */
export function setFieldError(control: HTMLElement, slot: HTMLElement, message: string | null): void {
  slot.textContent = message ?? '';
  if (message) control.setAttribute('aria-invalid', 'true');
  else control.removeAttribute('aria-invalid');
  const ids = new Set((control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean));
  if (message) ids.add(slot.id);
  else ids.delete(slot.id);
  if (ids.size) control.setAttribute('aria-describedby', [...ids].join(' '));
  else control.removeAttribute('aria-describedby');
}
