// Body capture settings (Logs page): off by default; on for a time window,
// some keys or some models; how long bodies are kept and how large they may be.
import { endpoints, type ApiKey, type CaptureSettings } from '../api';
import { busy, clear, errorBox, field, formatDate, h, notice } from '../dom';
import { parseList } from '../lib/format';
import { gateForm } from './role-gate';

const WINDOWS: ReadonlyArray<[string, string]> = [
  ['15', 'for 15 minutes'],
  ['60', 'for 1 hour'],
  ['1440', 'for 1 day'],
  ['', 'until switched off'],
];

/** One sentence saying what is captured now. */
export function captureSummary(c: CaptureSettings, keyName: (id: string) => string): string {
  if (!c.enabled) return 'Off: no bodies are captured.';
  if (!c.active) return 'Off: the capture window ended.';
  const who = c.keyIds.length ? `key${c.keyIds.length > 1 ? 's' : ''} ${c.keyIds.map(keyName).join(', ')}` : 'every key (except private ones)';
  const what = c.models.length ? `, model${c.models.length > 1 ? 's' : ''} ${c.models.join(', ')}` : '';
  return `On for ${who}${what}${c.until ? `, until ${formatDate(c.until)}` : ''}.`;
}

export function renderCaptureSettings(signal: AbortSignal): HTMLElement {
  const status = h('span', { class: 'small', 'data-testid': 'capture-status' }, 'Loading…');
  const body = h('div', null);
  const card = h(
    'details',
    { class: 'card capture-card', 'data-testid': 'capture-card' },
    h('summary', null, h('strong', null, 'Body capture'), ' — ', status),
    body,
  );
  let keys: ApiKey[] = [];
  const keyName = (id: string) => keys.find((k) => k.id === id)?.name || id.slice(0, 8);

  async function load(): Promise<void> {
    try {
      const [c, k] = await Promise.all([endpoints.captureSettings(signal), endpoints.listKeys(signal)]);
      if (signal.aborted) return;
      keys = k;
      status.textContent = captureSummary(c, keyName);
      render(c);
    } catch (err) {
      if (!signal.aborted) clear(body, errorBox(err, () => void load()));
    }
  }

  function render(c: CaptureSettings): void {
    const enabled = h('input', { id: 'capture-enabled', type: 'checkbox', checked: c.enabled });
    const windowSel = h('select', { id: 'capture-window' }, WINDOWS.map(([v, l]) => h('option', { value: v, selected: v === '60' }, l)));
    const keyBoxes = keys.map((k) =>
      h('label', { class: 'check-inline' }, h('input', { type: 'checkbox', value: k.id, checked: c.keyIds.includes(k.id), disabled: !!k.private }), ` ${k.name}${k.private ? ' (private)' : ''}`),
    );
    const models = h('input', { id: 'capture-models', type: 'text', value: c.models.join(', '), placeholder: 'any model', autocomplete: 'off' });
    const retention = h('input', { id: 'capture-retention', type: 'number', min: '1', value: String(c.retentionMinutes) });
    const perBody = h('input', { id: 'capture-body-kib', type: 'number', min: '1', value: String(Math.round(c.maxBodyBytes / 1024)) });
    const total = h('input', { id: 'capture-total-mib', type: 'number', min: '1', value: String(Math.round(c.maxTotalBytes / (1 << 20))) });
    const save = h('button', { type: 'button', class: 'btn btn-primary' }, 'Save capture settings');
    const msg = h('div', { class: 'row-message' });
    save.addEventListener('click', () =>
      busy(
        [save],
        async () => {
          try {
            const out: Parameters<typeof endpoints.saveCapture>[0] = {
              enabled: enabled.checked,
              keyIds: keyBoxes.map((l) => l.querySelector('input')!).filter((i) => i.checked).map((i) => i.value),
              models: parseList(models.value),
              retentionMinutes: Number(retention.value),
              maxBodyBytes: Number(perBody.value) * 1024,
              maxTotalBytes: Number(total.value) * (1 << 20),
            };
            if (enabled.checked) {
              if (windowSel.value) out.forMinutes = Number(windowSel.value);
              else out.until = null;
            }
            const c2 = await endpoints.saveCapture(out);
            status.textContent = captureSummary(c2, keyName);
            clear(msg, notice('Capture settings saved.', 'success'));
          } catch (err) {
            clear(msg, errorBox(err));
          }
        },
        { button: save, label: 'Saving…' },
      ),
    );
    clear(
      body,
      h('p', { class: 'muted small' }, 'Off by default. Captured bodies are redacted (keys, bearer tokens, the connection’s secret), capped, and deleted after the retention. Keys marked private are never captured.'),
      h(
        'div',
        { class: 'form-grid' },
        h('div', { class: 'field field-check' }, h('label', { for: 'capture-enabled' }, enabled, ' Capture bodies')),
        field('Window', windowSel),
        field('Only models', models, 'Comma-separated; empty: any model'),
        field('Keep for (minutes)', retention),
        field('Per body (KiB)', perBody),
        field('In total (MiB)', total),
      ),
      h('fieldset', { class: 'capture-keys' }, h('legend', { class: 'small' }, 'Only these keys (none ticked: every key)'), keyBoxes),
      h('div', { class: 'form-actions' }, save),
      msg,
    );
    gateForm(body, 'PATCH /api/capture', 'Changing body capture');
  }

  void load();
  return card;
}
