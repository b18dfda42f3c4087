import { ApiError, endpoints, isAbortError, type Agent, type AgentChoice, type AgentInstructions, type AgentModelMap, type AgentModels } from '../api';
import { badge, busy, clear, confirmDialog, copyButton, emptyState, errorBox, field, h, loading, notice, showFieldError } from '../dom';
import { maskSecret, shellExports } from '../lib/format';
import type { ViewContext } from '../router';
import { gateForm, gateWrites } from './role-gate';

/**
 * IDE agents (Claude Code, Codex, …) the gateway can point at itself:
 * "file" agents get their config file written (with a backup, undoable);
 * "manual" agents only get instructions to follow.
 */
export function renderAgents(root: HTMLElement, ctx: ViewContext): void {
  let agents: Agent[] | null = null;
  /** Open instruction panels: agent id → instructions (null while loading). */
  const open = new Map<string, AgentInstructions | null | Error>();

  /** The model “Configure” writes ("" = the agent model map's choice). */
  let setupModel = '';
  const heading = h('h1', { tabindex: '-1' }, 'Agents');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  const message = h('div', { class: 'row-message', 'aria-live': 'polite' });
  const listArea = h('div', { class: 'list-area' });

  clear(
    root,
    h('div', { class: 'page-head' }, heading, refreshBtn),
    h(
      'p',
      { class: 'muted page-intro' },
      'Point your coding agents at the gateway. “Configure” writes the agent’s config file (keeping a backup you can restore with “Undo”); agents without a config file get step-by-step instructions.',
    ),
    message,
    renderModelSettings(ctx, (m) => (setupModel = m)),
    h('section', { 'aria-labelledby': 'agents-title' }, h('h2', { id: 'agents-title', class: 'visually-hidden' }, 'Agent list'), listArea),
  );

  async function load(quiet = false, focusKey?: string): Promise<void> {
    if (!quiet || agents === null) clear(listArea, loading('Loading agents…'));
    refreshBtn.disabled = true;
    try {
      const list = await endpoints.listAgents(ctx.signal);
      if (ctx.signal.aborted) return;
      agents = list;
      renderList(focusKey);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    } finally {
      refreshBtn.disabled = false;
    }
  }

  function renderList(focusKey?: string): void {
    const key = focusKey ?? (document.activeElement as HTMLElement | null)?.dataset?.['focusKey'];
    const list = agents ?? [];
    if (list.length === 0) {
      clear(listArea, emptyState('No agents known to this gateway', 'Update OmniRoute to get setup support for more agents.'));
      return;
    }
    clear(listArea, h('ul', { class: 'agent-list' }, list.map(renderAgent)));
    if (key) listArea.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(key)}"]`)?.focus();
  }

  function renderAgent(a: Agent): HTMLElement {
    const manual = a.kind !== 'file';
    const fk = (w: string) => `${a.id}:${w}`;
    const panelId = `agent-${a.id}-instructions`;
    const isOpen = open.has(a.id);
    const configureBtn = manual
      ? null
      : h('button', { type: 'button', class: 'btn btn-small btn-primary', 'data-focus-key': fk('setup') }, a.configured ? 'Configure again' : 'Configure');
    const undoBtn =
      !manual && (a.hasBackup || a.configured)
        ? h('button', { type: 'button', class: 'btn btn-small', 'data-focus-key': fk('undo') }, 'Undo')
        : null;
    const instrBtn = h(
      'button',
      { type: 'button', class: 'btn btn-small', 'aria-expanded': String(isOpen), 'aria-controls': panelId, 'data-focus-key': fk('instructions') },
      isOpen ? 'Hide instructions' : 'Show instructions',
    );
    const buttons = [configureBtn, undoBtn, instrBtn].filter((b): b is HTMLButtonElement => b !== null);
    // Configure and Undo write the default key into a file; the instructions show it: admins only.
    gateWrites([[configureBtn, 'POST /api/agents/{id}/setup'], [undoBtn, 'POST /api/agents/{id}/undo'], [instrBtn, 'GET /api/agents/{id}/instructions']]);

    configureBtn?.addEventListener('click', () =>
      void busy(buttons, async () => {
        try {
          let res;
          try {
            res = await endpoints.setupAgent(a.id, setupModel);
          } catch (err) {
            // Every connection behind the model is unreachable or rejected:
            // say why, and configure only when the user insists.
            if (!(err instanceof ApiError && err.code === 'AGENT_MODEL_UNSERVABLE')) throw err;
            const anyway = await confirmDialog({ title: `Configure ${a.name} anyway?`, message: err.message, confirmLabel: 'Configure anyway' });
            if (!anyway || ctx.signal.aborted) return;
            res = await endpoints.setupAgent(a.id, setupModel, true);
          }
          if (ctx.signal.aborted) return;
          const parts = [`Configured ${a.name}${res?.path ? `: wrote ${res.path}` : ''}.`];
          if (res?.models?.model) parts.push(describeModels(res.models));
          if (res?.backupPath) parts.push(`The previous file is saved as ${res.backupPath}.`);
          else if (res?.created) parts.push('The file was created (there was none before).');
          // Every connection behind the model is unreachable or rejected:
          // configured, but the agent would see only errors until it is fixed.
          if (res?.models?.warning) clear(message, notice(`${parts.join(' ')} Warning: ${res.models.warning}`, 'info'));
          else clear(message, notice(parts.join(' '), 'success'));
          if (res?.instructions) open.set(a.id, res.instructions);
          await load(true, fk('setup'));
        } catch (err) {
          if (!ctx.signal.aborted) clear(message, errorBox(err));
        }
      }, { button: configureBtn, label: 'Configuring…' }),
    );

    undoBtn?.addEventListener('click', async () => {
      const yes = await confirmDialog({
        title: `Undo ${a.name} setup?`,
        message: `Put ${a.configPath || 'the config file'} back the way it was before OmniRoute configured it (a file OmniRoute created is removed)?`,
        confirmLabel: 'Undo setup',
      });
      if (!yes) return undoBtn.focus();
      await busy(buttons, async () => {
        try {
          await endpoints.undoAgent(a.id);
          if (ctx.signal.aborted) return;
          clear(message, notice(`Undid the ${a.name} setup.`, 'success'));
          open.delete(a.id);
          await load(true, fk('instructions'));
        } catch (err) {
          if (!ctx.signal.aborted) clear(message, errorBox(err));
        }
      }, { button: undoBtn, label: 'Undoing…' });
    });

    instrBtn.addEventListener('click', async () => {
      if (open.has(a.id)) {
        open.delete(a.id);
        renderList(fk('instructions'));
        return;
      }
      open.set(a.id, null);
      renderList(fk('instructions'));
      try {
        const ins = await endpoints.agentInstructions(a.id, ctx.signal);
        if (ctx.signal.aborted || !open.has(a.id)) return;
        open.set(a.id, ins ?? {});
      } catch (err) {
        if (isAbortError(err) || ctx.signal.aborted || !open.has(a.id)) return;
        open.set(a.id, err instanceof Error ? err : new Error(String(err)));
      }
      renderList();
    });

    const state = a.unreachable
      ? badge('Cannot reach this gateway', 'warn')
      : manual
      ? badge('Manual setup', 'muted')
      : a.configured
        ? badge('Configured', 'ok')
        : badge('Not configured', 'muted');
    const ins = open.get(a.id);
    return h(
      'li',
      { class: 'card agent', 'data-agent': a.id },
      h(
        'div',
        { class: 'agent-head' },
        h(
          'div',
          null,
          h('h3', { class: 'agent-name' }, a.name || a.id),
          h(
            'p',
            { class: 'muted small' },
            state,
            ' ',
            a.hasBackup ? h('span', { class: 'chip' }, 'backup saved') : null,
            a.unreachable
              ? h('span', { class: 'agent-unreachable' }, a.unreachable)
              : a.configPath
                ? h('code', { class: 'path' }, a.configPath)
                : manual
                  ? 'Follow the instructions to set it up.'
                  : null,
          ),
        ),
        h('div', { class: 'btn-row' }, buttons),
      ),
      isOpen ? h('div', { id: panelId, class: 'instructions' }, renderInstructions(a, ins)) : null,
    );
  }

  refreshBtn.addEventListener('click', () => void load());
  void load();
}

function renderInstructions(a: Agent, ins: AgentInstructions | null | Error | undefined): HTMLElement {
  if (ins == null) return loading(`Loading ${a.name} instructions…`);
  if (ins instanceof Error) return errorBox(ins);
  const env = ins.env && typeof ins.env === 'object' ? Object.entries(ins.env) : [];
  const steps = Array.isArray(ins.steps) ? ins.steps.filter((s) => typeof s === 'string' && s.trim()) : [];
  if (env.length === 0 && steps.length === 0) return emptyState('No instructions for this agent');
  // Secrets are never shown in clear here: the copy buttons copy the real value.
  const secrets = env.filter(([k, v]) => isSecret(k, String(v))).map(([, v]) => String(v));
  const masked = (text: string) =>
    secrets.reduce((t, sec) => (sec ? t.split(sec).join(maskSecret(sec)) : t), text).replace(/sk-omni-[A-Za-z0-9_-]+/g, (k) => maskSecret(k));
  return h(
    'div',
    null,
    env.length
      ? h(
          'section',
          { 'aria-label': `${a.name} environment variables` },
          h('div', { class: 'section-head' }, h('h4', null, 'Environment'), copyButton(() => shellExports(ins.env), { label: 'Copy all as exports', ariaLabel: `Copy all ${a.name} environment variables as shell exports` })),
          h(
            'ul',
            { class: 'env-list' },
            env.map(([k, v]) =>
              h(
                'li',
                { class: 'copy-line' },
                h('code', { 'data-testid': 'env-line' }, masked(`${k}=${v}`)),
                copyButton(() => `${k}=${v}`, { ariaLabel: `Copy ${k}` }),
              ),
            ),
          ),
        )
      : null,
    steps.length
      ? h(
          'section',
          { 'aria-label': `${a.name} steps` },
          h('h4', null, 'Steps'),
          h(
            'ol',
            { class: 'steps' },
            steps.map((s, i) => h('li', { class: 'copy-line' }, h('span', { class: 'step-text' }, masked(s)), copyButton(() => s, { ariaLabel: `Copy step ${i + 1}` }))),
          ),
        )
      : null,
  );
}

/** Says which models setup wrote. */
function describeModels(m: AgentModels): string {
  let text = `Model: ${m.model}`;
  if (m.haiku && m.haiku !== m.model) text += `, background (haiku) model: ${m.haiku}`;
  if (m.opus && m.opus !== m.model) text += `, opus: ${m.opus}`;
  return text + '.';
}

/** The options of “Model for Configure”: the recommendation first, then every choice in the gateway's order. */
export function choiceOptions(choices: readonly AgentChoice[]): HTMLOptionElement[] {
  const rec = choices.find((c) => c.recommended);
  const first = h('option', { value: '' }, rec ? `Recommended: ${rec.name}${rec.why ? ` (${rec.why})` : ''}` : 'Recommended (nothing serves yet)');
  return [
    first,
    ...choices.map((c) => {
      const parts = [c.name, c.kind === 'combo' ? 'combo' : 'model'];
      if (c.requests) parts.push(`${c.requests} requests this week`);
      const label = `${parts[0]} — ${parts.slice(1).join(' · ')}${c.serving ? '' : ' · not serving now'}`;
      return h('option', { value: c.name, title: c.why ?? '' }, label);
    }),
  ];
}

const FAMILIES: [keyof AgentModelMap & string, string, string][] = [
  ['opus', 'Claude Code opus', 'claude-opus-4-*, opus'],
  ['sonnet', 'Claude Code sonnet', 'claude-sonnet-4-*, sonnet'],
  ['haiku', 'Claude Code haiku / background', 'claude-3-5-haiku*, claude-haiku-*: its small-fast model; a cheap model fits'],
  ['codex', 'Codex default', 'gpt-5, gpt-5.N, *codex*'],
];

/**
 * The model Configure writes, and the agent model map: where the model names
 * agents ask for on their own go when no connection serves them.
 */
function renderModelSettings(ctx: ViewContext, onModel: (m: string) => void): HTMLElement {
  const listId = 'agent-model-names';
  const datalist = h('datalist', { id: listId });
  // Configure offers the served combos and models, the recommended one first
  // (GET /api/agents/{id}/choices): no free text that can name nothing.
  const setupModel = h('select', { id: 'agent-setup-model', name: 'model', 'data-testid': 'agent-setup-model' }, h('option', { value: '' }, 'Recommended'));
  setupModel.addEventListener('change', () => onModel(setupModel.value.trim()));
  const enabled = h('input', { id: 'agent-map-enabled', type: 'checkbox', name: 'enabled' });
  const inputs = new Map<string, HTMLInputElement>();
  for (const [key] of FAMILIES) {
    inputs.set(key, h('input', { id: `agent-map-${key}`, name: key, autocomplete: 'off', spellcheck: 'false', list: listId, placeholder: 'automatic' }));
  }
  const save = h('button', { type: 'submit', class: 'btn btn-primary btn-small' }, 'Save model map');
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card agent-models', novalidate: true, 'aria-labelledby': 'agent-models-title' },
    h('h2', { id: 'agent-models-title' }, 'Models'),
    h(
      'p',
      { class: 'muted small' },
      'Agents ask for their own model names (Claude Code: claude-opus-4-…, its haiku background model; Codex: gpt-5-codex). ' +
        'When no connection serves such a name, the gateway sends it where this map says; empty means automatic: for opus, sonnet and haiku the newest model of that family on your Claude connection, else the first healthy combo, else the first served model. Any other unknown name is answered “model not found” with the closest served name.',
    ),
    datalist,
    h('fieldset', { class: 'form-grid' }, field('Model for Configure', setupModel, 'What Configure writes: the recommended one (your map’s choice, else the combo used most this week), or any served combo or model.')),
    h(
      'fieldset',
      { class: 'form-grid' },
      h('legend', null, 'Agent model map'),
      h('label', { class: 'check' }, enabled, ' Route agents’ own model names through this map'),
      FAMILIES.map(([key, label, hint]) => field(label, inputs.get(key)!, hint)),
    ),
    status,
    h('div', { class: 'btn-row' }, save),
  );
  gateForm(form, 'PATCH /api/settings', 'Changing the model map');

  async function load(): Promise<void> {
    try {
      const [map, conns, combos, choices] = await Promise.all([
        endpoints.getAgentModelMap(ctx.signal),
        endpoints.listConnections(ctx.signal),
        endpoints.listCombos(ctx.signal),
        endpoints.agentChoices('claude-code', ctx.signal).catch(() => [] as AgentChoice[]),
      ]);
      if (ctx.signal.aborted) return;
      const chosen = setupModel.value;
      setupModel.replaceChildren(...choiceOptions(choices));
      setupModel.value = [...setupModel.options].some((o) => o.value === chosen) ? chosen : '';
      enabled.checked = map.enabled !== false;
      for (const [key] of FAMILIES) inputs.get(key)!.value = String(map[key] ?? '');
      const names = new Set<string>();
      for (const c of combos) if (c.name) names.add(String(c.name));
      for (const c of conns) {
        if (c.isActive === false) continue;
        const served = Array.isArray(c.servedModels) ? c.servedModels : Array.isArray(c.models) ? c.models : [];
        for (const m of served) names.add(String(m));
      }
      clear(datalist, [...names].sort().map((n) => h('option', { value: n })));
    } catch (err) {
      if (!isAbortError(err) && !ctx.signal.aborted) clear(status, errorBox(err));
    }
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const patch: AgentModelMap = { enabled: enabled.checked };
    for (const [key] of FAMILIES) {
      const input = inputs.get(key)!;
      showFieldError(input, null);
      (patch as Record<string, unknown>)[key] = input.value.trim();
    }
    void busy([save], async () => {
      try {
        await endpoints.patchAgentModelMap(patch);
        if (!ctx.signal.aborted) clear(status, notice('Saved the agent model map.', 'success'));
      } catch (err) {
        if (ctx.signal.aborted) return;
        const key = err instanceof ApiError ? err.param?.replace(/^agentModelMap\./, '') : undefined;
        const input = key ? inputs.get(key) : undefined;
        if (input) {
          showFieldError(input, err instanceof Error ? err.message : String(err));
          input.focus();
        } else clear(status, errorBox(err));
      }
    }, { button: save, label: 'Saving…' });
  });
  void load();
  return form;
}

/** An environment value that is a credential: a client key, or a *KEY / *TOKEN / *SECRET variable. */
export function isSecret(name: string, value: string): boolean {
  return value.startsWith('sk-') || /(KEY|TOKEN|SECRET|PASSWORD)$/i.test(name);
}
