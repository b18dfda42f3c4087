import { endpoints, isAbortError, type Agent, type AgentInstructions } from '../api';
import { badge, busy, clear, confirmDialog, copyButton, emptyState, errorBox, h, loading, notice } from '../dom';
import { maskSecret, shellExports } from '../lib/format';
import type { ViewContext } from '../router';

/**
 * IDE agents (Claude Code, Codex, …) the gateway can point at itself:
 * "file" agents get their config file written (with a backup, undoable);
 * "manual" agents only get instructions to follow.
 */
export function renderAgents(root: HTMLElement, ctx: ViewContext): void {
  let agents: Agent[] | null = null;
  /** Open instruction panels: agent id → instructions (null while loading). */
  const open = new Map<string, AgentInstructions | null | Error>();

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

    configureBtn?.addEventListener('click', () =>
      void busy(buttons, async () => {
        try {
          const res = await endpoints.setupAgent(a.id);
          if (ctx.signal.aborted) return;
          const parts = [`Configured ${a.name}${res?.path ? `: wrote ${res.path}` : ''}.`];
          if (res?.backupPath) parts.push(`The previous file is saved as ${res.backupPath}.`);
          else if (res?.created) parts.push('The file was created (there was none before).');
          clear(message, notice(parts.join(' '), 'success'));
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

    const state = manual
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
            a.configPath ? h('code', { class: 'path' }, a.configPath) : manual ? 'Follow the instructions to set it up.' : null,
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

/** An environment value that is a credential: a client key, or a *KEY / *TOKEN / *SECRET variable. */
export function isSecret(name: string, value: string): boolean {
  return value.startsWith('sk-') || /(KEY|TOKEN|SECRET|PASSWORD)$/i.test(name);
}
