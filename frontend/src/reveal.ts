import { clear, copyText, h } from './dom';

/** What showSecretOnce shows: the new secret and the words around it. */
export interface SecretReveal {
  /** Prefix of the element ids (`<prefix>-value`, `-title`, `-warning`). */
  idPrefix: string;
  value: string;
  title: string;
  warning: string;
  /** The hidden label of the value's field. */
  label: string;
  /** What the secret is called in the copy failure ("key", "token"). */
  noun: string;
}

/**
 * Shows a new secret once in reveal: a read-only field, a Copy button, a plain
 * warning and Done, which removes it from the page and gives heading focus.
 */
export function showSecretOnce(reveal: HTMLElement, heading: HTMLElement, s: SecretReveal): void {
  const input = h('input', {
    id: `${s.idPrefix}-value`,
    class: 'secret',
    readonly: true,
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': `${s.idPrefix}-warning`,
  }) as HTMLInputElement;
  input.value = s.value; // a property, not an attribute in the markup
  const copyBtn = h('button', { type: 'button', class: 'btn btn-primary' }, 'Copy');
  const copied = h('span', { class: 'copy-status', role: 'status' });
  const done = h('button', { type: 'button', class: 'btn' }, 'Done — I saved it');
  copyBtn.addEventListener('click', async () => {
    const ok = await copyText(input.value, input);
    copied.textContent = ok ? 'Copied.' : `Could not copy: select the ${s.noun} and copy it yourself.`;
  });
  input.addEventListener('focus', () => input.select());
  done.addEventListener('click', () => {
    reveal.replaceChildren(); // the secret leaves the page for good
    heading.focus();
  });
  clear(
    reveal,
    h(
      'div',
      { class: 'card reveal', role: 'region', 'aria-labelledby': `${s.idPrefix}-title` },
      h('h2', { id: `${s.idPrefix}-title` }, s.title),
      h('p', { id: `${s.idPrefix}-warning`, class: 'warn-text' }, s.warning),
      h('div', { class: 'copy-row' }, h('label', { for: input.id, class: 'visually-hidden' }, s.label), input, copyBtn),
      copied,
      h('div', { class: 'form-actions' }, done),
    ),
  );
  input.focus();
}
