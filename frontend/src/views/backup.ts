import { endpoints, type RestoreResult } from '../api';
import { busy, clear, confirmDialog, errorBox, field, h, notice } from '../dom';
import type { ViewContext } from '../router';
import { gateForm } from './role-gate';

/** Kinds in the order a person reads them. */
const KINDS = ['connections', 'keys', 'combos', 'settings', 'rules', 'pricing', 'budgets', 'log'];

/** "connections: 2 added, 1 changed" lines with the names, or "unchanged". */
export function describeChanges(r: RestoreResult): Array<{ kind: string; text: string; items: string[] }> {
  const out: Array<{ kind: string; text: string; items: string[] }> = [];
  const kinds = [...KINDS.filter((k) => k in r.changes), ...Object.keys(r.changes).filter((k) => !KINDS.includes(k))];
  for (const kind of kinds) {
    const c = r.changes[kind];
    if (!c) continue;
    const n = c.added.length + c.changed.length + c.removed.length;
    const name = (i: { id: string; name?: string }) => (i.name ? `${i.name} (${i.id})` : i.id);
    out.push({
      kind,
      text: n === 0 ? `${kind}: unchanged` : `${kind}: ${c.added.length} added, ${c.changed.length} changed, ${c.removed.length} removed`,
      items: [...c.added.map((i) => `+ ${name(i)}`), ...c.changed.map((i) => `~ ${name(i)}`), ...c.removed.map((i) => `− ${name(i)}`)].slice(0, 50),
    });
  }
  return out;
}

/**
 * The Backup & Restore page: download a backup sealed with a passphrase, and
 * restore one into this running gateway after a preview of what changes.
 */
export function renderBackup(root: HTMLElement, _ctx: ViewContext): void {
  const heading = h('h1', { tabindex: '-1' }, 'Backup & Restore');

  const pass = h('input', { id: 'backup-pass', type: 'password', autocomplete: 'new-password', minlength: '8' }) as HTMLInputElement;
  const pass2 = h('input', { id: 'backup-pass2', type: 'password', autocomplete: 'new-password' }) as HTMLInputElement;
  const withLog = h('input', { id: 'backup-log', type: 'checkbox' }) as HTMLInputElement;
  const download = h('button', { type: 'button', class: 'btn btn-primary' }, 'Download backup');
  const backupMsg = h('div', { 'aria-live': 'polite', 'data-testid': 'backup-message' });

  download.addEventListener('click', () =>
    void busy([download], async () => {
      if (pass.value !== pass2.value) {
        clear(backupMsg, notice('The two passphrases differ.', 'info'));
        return;
      }
      try {
        const { blob, name } = await endpoints.backup(pass.value, withLog.checked);
        const url = URL.createObjectURL(blob);
        const a = h('a', { href: url, download: name });
        document.body.append(a);
        a.click();
        a.remove();
        window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
        clear(backupMsg, notice(`Saved ${name}. Keep the passphrase: nothing opens the file without it.`, 'success'));
      } catch (err) {
        clear(backupMsg, errorBox(err));
      }
    }, { button: download, label: 'Preparing…' }),
  );

  const file = h('input', { id: 'restore-file', type: 'file', accept: '.json,application/json' }) as HTMLInputElement;
  const rpass = h('input', { id: 'restore-pass', type: 'password', autocomplete: 'current-password' }) as HTMLInputElement;
  const preview = h('button', { type: 'button', class: 'btn' }, 'Preview restore');
  const apply = h('button', { type: 'button', class: 'btn btn-danger', disabled: true }, 'Restore now');
  const restoreMsg = h('div', { 'aria-live': 'polite', 'data-testid': 'restore-message' });
  const previewArea = h('div', { 'data-testid': 'restore-preview' });
  let previewed: { file: File; pass: string } | null = null;

  const invalidate = () => {
    previewed = null;
    apply.disabled = true;
    previewArea.replaceChildren();
  };
  file.addEventListener('change', invalidate);
  rpass.addEventListener('input', invalidate);

  function showPreview(r: RestoreResult): void {
    const lines = describeChanges(r);
    clear(
      previewArea,
      h('p', { class: 'muted small' }, `Backup of ${r.backup.createdAt} (schema version ${r.backup.schemaVersion}${r.backup.withLog ? ', with the request log' : ''}).`),
      h(
        'ul',
        { class: 'backup-preview' },
        lines.map((l) => h('li', { 'data-kind': l.kind }, h('strong', null, l.text), l.items.length ? h('ul', null, l.items.map((i) => h('li', null, h('code', null, i)))) : null)),
      ),
    );
  }

  preview.addEventListener('click', async () => {
    await busy([preview, apply], async () => {
      const f = file.files?.[0];
      if (!f) {
        clear(restoreMsg, notice('Choose a backup file first.', 'info'));
        return;
      }
      try {
        const r = await endpoints.restore(f, rpass.value, false);
        showPreview(r);
        previewed = { file: f, pass: rpass.value };
        clear(restoreMsg, notice('Nothing has changed yet. Restore now replaces the configuration with this backup.', 'info'));
      } catch (err) {
        invalidate();
        clear(restoreMsg, errorBox(err));
      }
    }, { button: preview, label: 'Reading…' });
    apply.disabled = previewed === null; // busy enabled it again
  });
  apply.addEventListener('click', async () => {
    if (!previewed) return;
    const ok = await confirmDialog({
      title: 'Restore this backup?',
      message: 'The connections, keys, combos, settings, rules, pricing and budgets are replaced by the backup’s, as the preview shows. Requests keep flowing.',
      confirmLabel: 'Restore now',
      danger: true,
    });
    if (!ok || !previewed) return;
    const p = previewed;
    await busy([preview, apply], async () => {
      try {
        const r = await endpoints.restore(p.file, p.pass, true);
        showPreview(r);
        clear(restoreMsg, notice('Restored. The gateway serves the backup’s configuration now.', 'success'));
        previewed = null;
      } catch (err) {
        clear(restoreMsg, errorBox(err));
      }
    }, { button: apply, label: 'Restoring…' });
    apply.disabled = previewed === null;
  });

  // Both cards are an admin's (a backup holds every credential; a restore replaces the configuration).
  const backupCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'backup-title', 'data-testid': 'backup-card' },
    h('h2', { id: 'backup-title' }, 'Back up'),
    field('Passphrase', pass, 'At least 8 characters.'),
    field('Repeat the passphrase', pass2),
    h('label', { class: 'check' }, withLog, ' Include the request log'),
    h('div', { class: 'btn-row' }, download),
    backupMsg,
  );
  const restoreCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'restore-title', 'data-testid': 'restore-card' },
    h('h2', { id: 'restore-title' }, 'Restore'),
    field('Backup file', file),
    field('Passphrase', rpass),
    h('div', { class: 'btn-row' }, preview, apply),
    restoreMsg,
    previewArea,
  );
  gateForm(backupCard, 'POST /api/backup', 'Backing up');
  gateForm(restoreCard, 'POST /api/restore', 'Restoring');
  clear(
    root,
    h('div', { class: 'page-head' }, heading),
    h(
      'p',
      { class: 'muted page-intro' },
      'One file with the settings, connections, keys (hashed), combos, rules, pricing and budgets. Credentials in it are sealed with your passphrase, never with this machine’s key, so it restores anywhere. Same as omniroute backup / omniroute restore.',
    ),
    backupCard,
    restoreCard,
  );
}
