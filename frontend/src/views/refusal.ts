import { ApiError } from '../lib/errors';
import { clear, errorBox, showFieldError } from '../dom';

/**
 * Shows the gateway's refusal of a connection form (the Add form and the Edit
 * dialog alike): the error box with its stable code in the form's status, and,
 * when the refusal names a field the form has, the field's own words under it
 * (never the code: that is the box's). Returns the field to focus, if any.
 */
export function showRefusal(err: unknown, status: HTMLElement, controlFor: (param: string) => HTMLElement | undefined): HTMLElement | undefined {
  clear(status, errorBox(err));
  const param = err instanceof ApiError ? err.param : undefined;
  const target = param ? controlFor(param) : undefined;
  if (target && err instanceof ApiError) showFieldError(target, err.message);
  return target;
}
