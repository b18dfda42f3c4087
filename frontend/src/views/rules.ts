import { endpoints, isAbortError } from '../api';
import { busy, clear, errorBox, field, h, loading, notice } from '../dom';
import { effectText, flagsText, matchText, parseRules, previewSentence, type ListedRule } from '../lib/rules';
import type { ViewContext } from '../router';
import { gateWrites } from './role-gate';

/**
 * The Rules page: every status restatement and provider error rule (built-in
 * and the operator's) with its hit count, an editor for the operator's rules
 * (settings.providerErrorRules, applied live) and a preview: "this sample
 * error would become…".
 */
export function renderRules(root: HTMLElement, ctx: ViewContext): void {
  const heading = h('h1', { tabindex: '-1' }, 'Rules');
  const listArea = h('div', { class: 'list-area', 'data-testid': 'rules-list' });
  const flagsLine = h('p', { class: 'muted small', 'data-testid': 'rule-flags' });
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const editor = h('textarea', { id: 'operator-rules', rows: 10, class: 'mono', spellcheck: false }) as HTMLTextAreaElement;
  const saveBtn = h('button', { type: 'button', class: 'btn btn-primary' }, 'Save rules');
  const saveMsg = h('div', { 'aria-live': 'polite' });
  gateWrites([[saveBtn, 'PATCH /api/settings']]); // the editor stays: the preview reads it and changes nothing
  const provider = h('input', { id: 'preview-provider', value: 'agentrouter', required: true }) as HTMLInputElement;
  const status = h('input', { id: 'preview-status', type: 'number', min: '400', max: '599', value: '403', required: true }) as HTMLInputElement;
  const sample = h('textarea', { id: 'preview-body', rows: 4, class: 'mono' }, '{"error":{"message":"用户额度不足","type":"new_api_error"}}') as HTMLTextAreaElement;
  const previewBtn = h('button', { type: 'button', class: 'btn' }, 'Preview');
  const previewOut = h('div', { 'aria-live': 'polite', 'data-testid': 'rule-preview' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h(
      'p',
      { class: 'muted page-intro' },
      'Before an upstream error is judged, restatements correct a lying status (a quota reported as 403 becomes 429 with a Retry-After), then provider error rules give it a reason and a scope: the model, the connection or the provider. Your rules are tried first, see the full error text and have their scope honoured; they apply to the next request.',
    ),
    h('section', { 'aria-labelledby': 'rules-all' }, h('h2', { id: 'rules-all' }, 'All rules'), flagsLine, listArea),
    h(
      'section',
      { 'aria-labelledby': 'rules-operator' },
      h('h2', { id: 'rules-operator' }, 'Your rules'),
      field('Rules (JSON array)', editor, 'Each: {"id", "provider", "match": {"statuses", "codes", "textMarkers", "excludeMarkers"}, "reason", "scope": "model" | "connection" | "provider", "cooldownMs"}.'),
      h('div', { class: 'btn-row' }, saveBtn),
      saveMsg,
    ),
    h(
      'section',
      { 'aria-labelledby': 'rules-preview' },
      h('h2', { id: 'rules-preview' }, 'Preview'),
      h('p', { class: 'muted' }, 'What would this sample error become? The preview uses the rules in the editor above, saved or not, and changes nothing.'),
      field('Provider', provider),
      field('Upstream status', status),
      field('Error body', sample),
      h('div', { class: 'btn-row' }, previewBtn),
      previewOut,
    ),
  );

  function renderList(items: ListedRule[]): void {
    if (items.length === 0) {
      clear(listArea, h('p', { class: 'muted' }, 'No rules.'));
      return;
    }
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table', 'data-testid': 'rules-table' },
          h('thead', null, h('tr', null, ...['Rule', 'Provider', 'Source', 'Matches', 'Effect', 'Hits'].map((c) => h('th', { scope: 'col' }, c)))),
          h(
            'tbody',
            null,
            ...items.map((r) =>
              h(
                'tr',
                { 'data-rule': `${r.source}:${r.id}` },
                h('td', null, h('code', null, r.id), h('small', { class: 'muted block' }, r.kind === 'restatement' ? 'status restatement' : r.rule?.description ?? 'provider error rule')),
                h('td', null, h('code', null, r.provider)),
                h('td', null, r.source),
                h('td', null, matchText(r)),
                h('td', null, effectText(r)),
                h('td', { class: 'num', 'data-testid': 'rule-hits' }, String(r.hits)),
              ),
            ),
          ),
        ),
      ),
    );
  }

  async function load(): Promise<void> {
    clear(listArea, loading('Loading rules…'));
    try {
      const [rules, settings] = await Promise.all([endpoints.listRules(ctx.signal), endpoints.getSettings(ctx.signal)]);
      if (ctx.signal.aborted) return;
      flagsLine.textContent = flagsText(rules.providers);
      renderList(rules.items);
      if (document.activeElement !== editor) editor.value = JSON.stringify(settings.providerErrorRules ?? [], null, 2);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    }
  }

  saveBtn.addEventListener('click', () => {
    const parsed = parseRules(editor.value);
    if ('error' in parsed) {
      clear(saveMsg, h('p', { class: 'field-error', role: 'alert' }, parsed.error));
      return;
    }
    void busy([saveBtn], async () => {
      try {
        await endpoints.patchSettings({ providerErrorRules: parsed.rules });
        clear(saveMsg, notice('Saved. The next request is judged by these rules.', 'success'));
        void load();
      } catch (err) {
        clear(saveMsg, errorBox(err));
      }
    }, { button: saveBtn, label: 'Saving…' });
  });

  previewBtn.addEventListener('click', () => {
    const parsed = parseRules(editor.value);
    const req = { provider: provider.value.trim(), status: Number(status.value), body: sample.value, ...('rules' in parsed ? { rules: parsed.rules } : {}) };
    void busy([previewBtn], async () => {
      try {
        const p = await endpoints.previewRule(req);
        clear(previewOut, h('p', { class: 'alert alert-info', role: 'status' }, previewSentence(p)));
      } catch (err) {
        clear(previewOut, errorBox(err));
      }
    }, { button: previewBtn, label: 'Previewing…' });
  });
  refreshBtn.addEventListener('click', () => void load());
  void load();
}
