// The From / To pickers of a custom date range (issue 42 item 10), shared by
// the Usage and Logs pages: two datetime-local fields, Apply, and the reason
// next to the field when the range cannot be used.

import { h, setFieldError } from '../dom';
import { checkRange, isoToLocal, type IsoRange } from '../lib/daterange';

export interface DateRangeFields {
  el: HTMLElement;
  /** Shows or hides the pickers (a page shows them only for its Custom range). */
  show(on: boolean): void;
  /** Fills the pickers from a range (RFC 3339). */
  set(r: IsoRange): void;
  /** The checked range, or null (the reason shown by its field). */
  read(): IsoRange | null;
}

export function dateRangeFields(idPrefix: string, onApply: (r: IsoRange) => void): DateRangeFields {
  const from = h('input', { id: `${idPrefix}-from`, type: 'datetime-local', 'data-testid': `${idPrefix}-from` }) as HTMLInputElement;
  const to = h('input', { id: `${idPrefix}-to`, type: 'datetime-local', 'data-testid': `${idPrefix}-to` }) as HTMLInputElement;
  const fromErr = h('small', { id: `${idPrefix}-from-error`, class: 'field-error' });
  const toErr = h('small', { id: `${idPrefix}-to-error`, class: 'field-error' });
  const apply = h('button', { type: 'submit', class: 'btn btn-small btn-primary' }, 'Apply range');
  const el = h(
    'form',
    { class: 'date-range', 'aria-label': 'Custom time range', 'data-testid': `${idPrefix}-range`, novalidate: true },
    h('label', { class: 'inline-field', for: from.id }, 'From ', from),
    h('label', { class: 'inline-field', for: to.id }, 'To ', to),
    apply,
    h('small', { class: 'muted' }, 'Your time zone; an empty “To” means until now.'),
    fromErr,
    toErr,
  );
  el.hidden = true;
  function read(): IsoRange | null {
    const r = checkRange(from.value, to.value);
    setFieldError(from, fromErr, 'error' in r && r.field === 'from' ? r.error : null);
    setFieldError(to, toErr, 'error' in r && r.field === 'to' ? r.error : null);
    if ('error' in r) {
      (r.field === 'from' ? from : to).focus();
      return null;
    }
    return r;
  }
  el.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const r = read();
    if (r) onApply(r);
  });
  return {
    el,
    show: (on) => {
      el.hidden = !on;
    },
    set: (r) => {
      from.value = isoToLocal(r.from);
      to.value = isoToLocal(r.to);
    },
    read,
  };
}
