import { endpoints, isAbortError, type FeatureFlag } from '../api';
import { busy, clear, errorBox, field, h, loading, notice } from '../dom';
import type { ViewContext } from '../router';
import { gateWrites } from './role-gate';

/**
 * The Feature Flags page: live switches that override their env default
 * without a restart (PATCH /api/settings {"featureFlags": …}).
 */
export function renderFlags(root: HTMLElement, ctx: ViewContext): void {
  const heading = h('h1', { tabindex: '-1' }, 'Feature Flags');
  const area = h('div', { class: 'list-area' });
  clear(
    root,
    h('div', { class: 'page-head' }, heading),
    h('p', { class: 'muted page-intro' }, 'Switches that apply to the next request, no restart needed. A switch you never set follows its environment variable.'),
    area,
  );

  function renderFlag(f: FeatureFlag): HTMLElement {
    const toggle = h('input', { id: `flag-${f.key}`, type: 'checkbox', checked: f.enabled }) as HTMLInputElement;
    const model = h('input', { id: `flag-${f.key}-model`, value: f.model ?? '', placeholder: 'e.g. ollama/llama3.2' }) as HTMLInputElement;
    const save = h('button', { type: 'button', class: 'btn btn-primary' }, 'Save');
    const reset = h('button', { type: 'button', class: 'btn' }, 'Use env default');
    const msg = h('div', { 'aria-live': 'polite' });
    gateWrites([[toggle, 'PATCH /api/settings'], [model, 'PATCH /api/settings'], [save, 'PATCH /api/settings'], [reset, 'PATCH /api/settings']]);
    const send = (enabled: boolean | null) =>
      busy([save, reset], async () => {
        try {
          await endpoints.patchSettings({ featureFlags: { emergencyFallback: enabled, emergencyFallbackModel: model.value.trim() } });
          clear(msg, notice('Saved. The next request uses it.', 'success'));
          void load();
        } catch (err) {
          clear(msg, errorBox(err));
        }
      });
    save.addEventListener('click', () => void send(toggle.checked));
    reset.addEventListener('click', () => void send(null));
    return h(
      'section',
      { class: 'card', 'data-flag': f.key },
      h('h2', null, 'Emergency fallback'),
      h('p', { class: 'muted' }, f.description),
      h('label', { class: 'check' }, toggle, ' Enabled'),
      h(
        'p',
        { class: 'muted small', 'data-testid': 'flag-source' },
        f.source === 'settings' ? `Set here (env ${f.env} says ${f.envDefault ? 'on' : 'off'}).` : `Following ${f.env} (${f.envDefault ? 'on' : 'off'}).`,
      ),
      field('Emergency model', model, 'A model or combo every request falls back to once when nothing else could serve it; empty turns the fallback off.'),
      h('div', { class: 'btn-row' }, save, reset),
      msg,
    );
  }

  async function load(): Promise<void> {
    clear(area, loading('Loading flags…'));
    try {
      const flags = await endpoints.featureFlags(ctx.signal);
      if (ctx.signal.aborted) return;
      clear(area, ...flags.map(renderFlag));
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(area, errorBox(err, () => void load()));
    }
  }
  void load();
}
