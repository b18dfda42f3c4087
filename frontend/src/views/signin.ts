import { normalizeToken, setToken } from '../api';
import { h, clear } from '../dom';

export interface SignInOptions {
  /** Why the form is shown, e.g. the saved token was rejected. */
  reason?: string;
  onSignedIn: () => void;
}

export function renderSignIn(root: HTMLElement, opts: SignInOptions): void {
  const input = h('input', {
    id: 'signin-token',
    name: 'token',
    type: 'password',
    required: true,
    autocomplete: 'off',
    autocapitalize: 'off',
    spellcheck: 'false',
  });
  const error = h('div', { class: 'form-error', role: 'alert' });
  const form = h(
    'form',
    { class: 'card signin', novalidate: true },
    h('h1', { tabindex: '-1' }, 'Sign in'),
    opts.reason ? h('div', { class: 'alert alert-warn', role: 'status' }, opts.reason) : null,
    h(
      'p',
      null,
      'Paste the management token — run ',
      h('code', null, 'omniroute token'),
      ' on the machine running the gateway to print it. The gateway also prints a dashboard link that signs you in.',
    ),
    h(
      'div',
      { class: 'field' },
      h('label', { for: input.id }, 'Management token'),
      input,
    ),
    error,
    h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, 'Sign in')),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const token = normalizeToken(input.value);
    if (!token) {
      clear(error, 'Paste the token first.');
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    setToken(token);
    input.value = '';
    opts.onSignedIn();
  });
  clear(root, form);
  input.focus();
}
