import { endpoints, type ResilienceSettings } from '../api';
import { busy } from '../dom';

/** The result of one settings save: the stored document, or the error to show by its field. */
export type SaveOutcome = { saved: ResilienceSettings } | { err: unknown };

/**
 * Sends a partial PATCH /api/resilience with the form's buttons disabled and the
 * save button saying "Saving…"; every settings page (Resilience, Lockout,
 * Cooldown Manager rules) saves through here.
 */
export function saveResilience(
  patch: ResilienceSettings,
  controls: HTMLButtonElement[],
  saveBtn: HTMLButtonElement,
): Promise<SaveOutcome> {
  return busy(controls, async () => {
    try {
      return { saved: await endpoints.patchResilience(patch) };
    } catch (err) {
      return { err };
    }
  }, { button: saveBtn, label: 'Saving…' });
}
