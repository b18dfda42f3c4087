// The API Keys page's expiry and rotation parts (issue 42 item 10): the
// Expires cell, the expiry field of the create form, the Expiry dialog and
// the Rotate dialog, whose new secret is shown once (showSecretOnce).

import { ApiError, endpoints, type ApiKey, type CreatedApiKey } from '../api';
import { badge, clear, errorBox, field, formatDate, h, openDialog, setFieldError } from '../dom';
import { checkExpiry, expiryState, GRACE_CHOICES, isoToLocal } from '../lib/keyexpiry';
import { showSecretOnce } from '../reveal';

/** The Expires cell: never, a countdown (warn within a week) or "expired"; the previous secret's grace when one runs. */
export function expiryCell(k: ApiKey): HTMLElement {
  const st = expiryState(k.expiresAt, k.expired);
  return h(
    'div',
    { 'data-testid': 'key-expiry', 'data-expired': String(st.expired) },
    st.tone === 'muted' ? h('span', { class: 'muted' }, 'never') : badge(st.text, st.tone, k.expiresAt ? formatDate(k.expiresAt) : undefined),
    k.expiresAt && !st.expired ? h('div', { class: 'muted small' }, formatDate(k.expiresAt)) : null,
    st.expired ? h('div', { class: 'muted small' }, 'Refused with 401 KEY_EXPIRED: set a later expiry or rotate it.') : null,
    k.previousValidUntil
      ? h('div', { class: 'muted small', 'data-testid': 'key-grace' }, `Old secret works until ${formatDate(k.previousValidUntil)}`)
      : null,
  );
}

/** The create form's optional expiry: the field and its reader (undefined: never; null: invalid, error shown). */
export function expiryInput(prefix: string): { el: HTMLElement; read: () => string | undefined | null } {
  const input = h('input', { id: `${prefix}-expires`, type: 'datetime-local' }) as HTMLInputElement;
  const el = field('Expires (optional)', input, 'After this time the key is refused (401 KEY_EXPIRED). Empty: never.');
  const read = () => {
    const r = checkExpiry(input.value);
    showError(input, 'error' in r ? r.error : null);
    if ('error' in r) {
      input.focus();
      return null;
    }
    return r.iso ?? undefined;
  };
  return { el, read };
}

function showError(input: HTMLElement, msg: string | null): void {
  const slot = input.closest('.field')?.querySelector<HTMLElement>('.field-error');
  if (slot) setFieldError(input, slot, msg);
}

/** The Expiry dialog: a date and time, or Never; the gateway's refusal under the field. */
export function openExpiryDialog(k: ApiKey, onSaved: (saved: ApiKey) => void): void {
  const label = k.name || k.id;
  const input = h('input', { id: 'key-expiry-at', type: 'datetime-local' }) as HTMLInputElement;
  input.value = isoToLocal(k.expiresAt);
  const status = h('div', { class: 'form-status' });
  const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save expiry');
  const never = h('button', { type: 'button', class: 'btn' }, 'Never expires');
  const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
  const form = h(
    'form',
    { class: 'expiry-form' },
    field('Expires at', input, 'Your time zone. After it, requests with this key get 401 KEY_EXPIRED.'),
    status,
    h('div', { class: 'form-actions' }, save, never, cancel),
  );
  const handle = openDialog({ title: `Expiry of “${label}”`, content: form, initialFocus: input });
  cancel.addEventListener('click', () => handle.close());
  async function send(iso: string | null): Promise<void> {
    save.disabled = never.disabled = true;
    status.replaceChildren();
    try {
      const saved = await endpoints.setKeyExpiry(k.id, iso);
      handle.close();
      onSaved(saved);
    } catch (err) {
      save.disabled = never.disabled = false;
      if (err instanceof ApiError && err.param === 'expiresAt') showError(input, `${err.message} (${err.code})`);
      else clear(status, errorBox(err));
    }
  }
  never.addEventListener('click', () => void send(null));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!input.value) {
      void send(null);
      return;
    }
    const r = checkExpiry(input.value);
    if ('error' in r) {
      showError(input, r.error);
      input.focus();
      return;
    }
    showError(input, null);
    void send(r.iso);
  });
}

/**
 * The Rotate dialog: a grace period, then a new secret for the same key
 * (name, access, budget and usage stay), shown once in `reveal`.
 */
export function openRotateDialog(k: ApiKey, reveal: HTMLElement, heading: HTMLElement, onDone: (created: CreatedApiKey) => void): void {
  const label = k.name || k.id;
  const choices = GRACE_CHOICES.map((c, i) => {
    const radio = h('input', { type: 'radio', name: 'rotate-grace', id: `rotate-grace-${c.ms}`, value: String(c.ms), checked: i === 0 }) as HTMLInputElement;
    return { c, radio, el: h('label', { class: 'check', for: radio.id }, radio, ' ', c.label) };
  });
  const status = h('div', { class: 'form-status' });
  const go = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Rotate key');
  const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
  const form = h(
    'form',
    { class: 'rotate-form' },
    h(
      'p',
      null,
      `“${label}” gets a new secret, shown once. Its name, access, budget, limits and usage history stay. Clients must switch to the new secret; the old one is refused (401 KEY_ROTATED) once the grace period ends.`,
    ),
    h('fieldset', { class: 'checks' }, h('legend', null, 'The old secret'), choices.map((x) => x.el)),
    status,
    h('div', { class: 'form-actions' }, go, cancel),
  );
  const handle = openDialog({ title: `Rotate “${label}”?`, content: form });
  cancel.addEventListener('click', () => handle.close());
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const grace = Number(choices.find((x) => x.radio.checked)?.c.ms ?? 0);
    go.disabled = true;
    status.replaceChildren();
    try {
      const created = await endpoints.rotateKey(k.id, grace);
      handle.close();
      showSecretOnce(reveal, heading, {
        idPrefix: 'rotated-key',
        value: created.key,
        title: `New secret for “${created.name || label}”`,
        warning:
          (grace ? `The old secret keeps working until ${formatDate(created.previousValidUntil ?? null)}. ` : 'The old secret no longer works. ') +
          'Copy the new one now: it is shown only once.',
        label: 'New secret of the rotated key',
        noun: 'key',
      });
      onDone(created);
    } catch (err) {
      go.disabled = false;
      clear(status, errorBox(err));
    }
  });
}
