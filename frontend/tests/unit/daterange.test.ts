import { describe, expect, it } from 'vitest';
import { checkRange, isoToLocal, localToIso } from '../../src/lib/daterange';

describe('custom date ranges', () => {
  const a = isoToLocal('2027-03-05T08:15:00Z');
  const b = isoToLocal('2027-03-05T09:15:00Z');
  it('needs a start, and an end after it (or none: until now)', () => {
    expect(checkRange('', b)).toEqual({ error: 'Choose when the range starts.', field: 'from' });
    expect(checkRange(b, a)).toEqual({ error: 'The end must be after the start.', field: 'to' });
    expect(checkRange(a, a)).toEqual({ error: 'The end must be after the start.', field: 'to' });
    expect(checkRange(a, '')).toEqual({ from: '2027-03-05T08:15:00.000Z', to: '' });
    expect(checkRange(a, b)).toEqual({ from: '2027-03-05T08:15:00.000Z', to: '2027-03-05T09:15:00.000Z' });
    expect(localToIso('garbage')).toBe('');
  });
});
