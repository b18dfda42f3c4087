import { endpoints, isAbortError, type AuditEntry, type AuditQuery } from '../api';
import { badge, busy, clear, emptyState, errorBox, field, formatDate, h, loading } from '../dom';
import type { ViewContext } from '../router';
import { auditSentence } from '../lib/audit-words';
import { canSend } from './role-gate';

const PAGE = 50;

/** A datetime-local value as RFC 3339 (the browser's time zone), '' for none. */
function rfc3339(local: string): string {
  if (!local) return '';
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/**
 * The Audit page: every management write (who, when, from where, what), the
 * newest first, filtered by actor, action and time, a page at a time.
 */
export function renderAudit(root: HTMLElement, ctx: ViewContext): void {
  const heading = h('h1', { tabindex: '-1' }, 'Audit log');
  const actor = h('input', { id: 'audit-actor', autocomplete: 'off', placeholder: 'e.g. alice@' }) as HTMLInputElement;
  const action = h('input', { id: 'audit-action', autocomplete: 'off', placeholder: 'e.g. keys' }) as HTMLInputElement;
  const since = h('input', { id: 'audit-since', type: 'datetime-local' }) as HTMLInputElement;
  const until = h('input', { id: 'audit-until', type: 'datetime-local' }) as HTMLInputElement;
  const apply = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply filters');
  const newest = h('button', { type: 'button', class: 'btn' }, 'Newest');
  const older = h('button', { type: 'button', class: 'btn' }, 'Older');
  const listArea = h('div', { class: 'list-area', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card filters', 'aria-label': 'Audit filters' },
    field('Actor', actor),
    field('Action', action),
    field('Since', since),
    field('Until', until),
    apply,
  );
  clear(
    root,
    h('div', { class: 'page-head' }, heading),
    h('p', { class: 'muted page-intro' }, 'Every change made through the dashboard or the management API. Secrets are never recorded.'),
    form,
    listArea,
    h('div', { class: 'btn-row pager' }, newest, older),
  );

  let before: number | undefined;
  let next: number | undefined;
  /** Names of the connections, keys, combos and users the page can read: entries name their target, never its id. */
  const names = new Map<string, string>();
  const namesLoaded = Promise.all([
    endpoints.listConnections(ctx.signal).then((l) => l.forEach((c) => names.set(c.id, c.name || c.provider))),
    endpoints.listKeys(ctx.signal).then((l) => l.forEach((k) => names.set(k.id, k.name))),
    endpoints.listCombos(ctx.signal).then((l) => l.forEach((c) => names.set(c.id, c.name))),
    canSend('GET /api/users') ? endpoints.listUsers(ctx.signal).then((l) => l.forEach((u) => names.set(u.id, u.name || u.email))) : Promise.resolve(), // only an admin may list people
  ].map((p) => p.catch(() => undefined)));

  function query(): AuditQuery {
    const q: AuditQuery = { limit: PAGE, actor: actor.value.trim(), action: action.value.trim(), since: rfc3339(since.value), until: rfc3339(until.value) };
    if (before) q.before = before;
    return q;
  }

  async function load(): Promise<void> {
    clear(listArea, loading('Loading the audit log…'));
    try {
      const [page] = await Promise.all([endpoints.listAudit(query(), ctx.signal), namesLoaded]);
      if (ctx.signal.aborted) return;
      next = page.nextBefore;
      older.disabled = !next;
      newest.disabled = !before;
      renderList(page.entries ?? []);
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return;
      clear(listArea, errorBox(err, () => void load()));
    }
  }

  function renderList(entries: AuditEntry[]): void {
    if (!entries.length) {
      clear(listArea, emptyState('No entries', 'Changes appear here as they are made.'));
      return;
    }
    clear(
      listArea,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table audit-table' },
          h('caption', { class: 'visually-hidden' }, `${entries.length} audit entries`),
          h('thead', null, h('tr', null, ['When', 'Who', 'What happened', 'Result', 'From'].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            null,
            entries.map((e) =>
              h(
                'tr',
                { 'data-audit-id': String(e.id) },
                h('td', { class: 'nowrap' }, formatDate(e.at)),
                h('td', null, h('div', { class: 'wrap-anywhere' }, e.actor), h('div', { class: 'muted small' }, e.role || e.actorKind)),
                // One sentence, the target by name; the route stays in the tooltip for searching.
                h('td', { class: 'wrap-anywhere', 'data-testid': 'audit-sentence', title: e.action }, auditSentence(e, names)),
                h('td', null, e.status < 400 ? badge('Done', 'ok') : badge('Refused', 'bad')),
                h('td', null, e.remote),
              ),
            ),
          ),
        ),
      ),
    );
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    before = undefined;
    void busy([apply], load);
  });
  newest.addEventListener('click', () => {
    before = undefined;
    void load();
  });
  older.addEventListener('click', () => {
    if (!next) return;
    before = next;
    void load();
  });
  void load();
}
