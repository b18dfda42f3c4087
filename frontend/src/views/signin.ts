import { endpoints, normalizeToken, setSession, setToken } from '../api';
import { h, clear, errorBox } from '../dom';

export interface SignInOptions {
  /** Why the form is shown, e.g. the saved token was rejected. */
  reason?: string;
  /** Users exist: ask for an email and password first (the token stays available). */
  users?: boolean;
  /** Single sign-on is configured: offer it. */
  sso?: boolean;
  onSignedIn: () => void;
}

function tokenForm(opts: SignInOptions, withHeading: boolean): { form: HTMLFormElement; input: HTMLInputElement } {
  const input = h('input', {
    id: 'signin-token',
    name: 'token',
    type: 'password',
    required: true,
    autocomplete: 'off',
    autocapitalize: 'off',
    spellcheck: 'false',
  }) as HTMLInputElement;
  const error = h('div', { class: 'form-error', role: 'alert' });
  const form = h(
    'form',
    { class: withHeading ? 'card signin' : 'signin-token', novalidate: true },
    withHeading ? h('h1', { tabindex: '-1' }, 'Sign in') : null,
    withHeading && opts.reason ? h('div', { class: 'alert alert-warn', role: 'status' }, opts.reason) : null,
    h(
      'p',
      null,
      'Paste the management token — run ',
      h('code', null, 'omniroute token'),
      ' on the machine running the gateway to print it. The gateway also prints a dashboard link that signs you in.',
    ),
    h('div', { class: 'field' }, h('label', { for: input.id }, 'Management token'), input),
    error,
    h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: withHeading ? 'btn btn-primary' : 'btn' }, 'Sign in with the token')),
  ) as HTMLFormElement;
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
  return { form, input };
}

export function renderSignIn(root: HTMLElement, opts: SignInOptions): void {
  if (!opts.users) {
    const { form, input } = tokenForm(opts, true);
    clear(root, form);
    input.focus();
    return;
  }
  // Users exist (a team server): email and password, single sign-on, or the token.
  const email = h('input', { id: 'signin-email', name: 'email', type: 'email', required: true, autocomplete: 'username' }) as HTMLInputElement;
  const password = h('input', { id: 'signin-password', name: 'password', type: 'password', required: true, autocomplete: 'current-password' }) as HTMLInputElement;
  const error = h('div', { class: 'form-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Sign in');
  const form = h(
    'form',
    { novalidate: true, 'aria-label': 'Sign in with email and password' },
    h('div', { class: 'field' }, h('label', { for: email.id }, 'Email'), email),
    h('div', { class: 'field' }, h('label', { for: password.id }, 'Password'), password),
    error,
    h('div', { class: 'form-actions' }, submit, opts.sso ? h('a', { class: 'btn', href: '/api/oidc/login' }, 'Sign in with single sign-on') : null),
  );
  const card = h(
    'div',
    { class: 'card signin' },
    h('h1', { tabindex: '-1' }, 'Sign in'),
    opts.reason ? h('div', { class: 'alert alert-warn', role: 'status' }, opts.reason) : null,
    form,
    h('details', { class: 'signin-alt' }, h('summary', null, 'Use a management token instead'), tokenForm(opts, false).form),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!email.value.trim() || !password.value) {
      clear(error, 'Enter your email and password.');
      (email.value.trim() ? password : email).focus();
      return;
    }
    submit.disabled = true;
    try {
      await endpoints.login(email.value.trim(), password.value);
      setSession(await endpoints.session());
      password.value = '';
      opts.onSignedIn();
    } catch (err) {
      clear(error, errorBox(err));
      password.value = '';
      password.focus();
    } finally {
      submit.disabled = false;
    }
  });
  clear(root, card);
  email.focus();
}
