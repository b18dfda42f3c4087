import { describe, expect, it } from 'vitest';
import { checkExpiry, expiryState, isoToLocal, localToIso } from '../../src/lib/keyexpiry';

describe('key expiry', () => {
  const now = Date.parse('2027-03-01T12:00:00Z');
  it('says never, expired, soon or later', () => {
    expect(expiryState(null, false, now)).toEqual({ text: 'never', tone: 'muted', expired: false });
    expect(expiryState('2027-03-01T12:00:00Z', false, now)).toEqual({ text: 'expired', tone: 'bad', expired: true });
    expect(expiryState('2027-03-01T12:00:00.001Z', false, now).expired).toBe(false);
    expect(expiryState('2027-03-02T13:30:00Z', false, now)).toEqual({ text: 'in 1 d 1 h', tone: 'warn', expired: false });
    expect(expiryState('2027-04-01T12:00:00Z', false, now).tone).toBe('ok');
    // The gateway's "expired" wins over a browser clock behind it.
    expect(expiryState('2027-04-01T12:00:00Z', true, now).expired).toBe(true);
  });
  it('round-trips datetime-local values', () => {
    const iso = '2027-03-05T08:15:00.000Z';
    expect(localToIso(isoToLocal(iso))).toBe(iso);
    expect(localToIso('')).toBe('');
    expect(isoToLocal(null)).toBe('');
  });
  it('checks the field before sending', () => {
    expect(checkExpiry('', now)).toEqual({ iso: null });
    expect(checkExpiry(isoToLocal('2027-02-01T00:00:00Z'), now)).toHaveProperty('error');
    expect(checkExpiry(isoToLocal('2027-05-01T00:00:00Z'), now)).toEqual({ iso: '2027-05-01T00:00:00.000Z' });
  });
});
