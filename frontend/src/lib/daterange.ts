// Custom date ranges (issue 42 item 10) of the Usage and Logs pages:
// datetime-local values (the browser's time zone) ↔ RFC 3339, and the check
// of a from / to pair before it is sent as the APIs' from= / to=.
// Unit-tested in tests/unit/daterange.test.ts.

/** A datetime-local value (the browser's time zone) as RFC 3339 UTC, '' for none or an invalid one. */
export function localToIso(local: string): string {
  if (!local) return '';
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** An RFC 3339 time as a datetime-local value in the browser's time zone ('' for none). */
export function isoToLocal(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A checked range: RFC 3339 from and to ('' for to: until now). */
export interface IsoRange {
  from: string;
  to: string;
}

/** Checks a from / to pair of datetime-local values: from required, to optional and after from. */
export function checkRange(fromLocal: string, toLocal: string): IsoRange | { error: string; field: 'from' | 'to' } {
  const from = localToIso(fromLocal);
  if (!from) return { error: 'Choose when the range starts.', field: 'from' };
  const to = localToIso(toLocal);
  if (toLocal && !to) return { error: 'Enter a valid end, or leave it empty for “until now”.', field: 'to' };
  if (to && Date.parse(to) <= Date.parse(from)) return { error: 'The end must be after the start.', field: 'to' };
  return { from, to };
}

/** "5 Mar 08:15 – now" style words for a range. */
export function describeRange(r: IsoRange): string {
  const fmt = (iso: string) => new Date(iso).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  return `${fmt(r.from)} – ${r.to ? fmt(r.to) : 'now'}`;
}
