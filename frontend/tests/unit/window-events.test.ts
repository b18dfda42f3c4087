import { describe, expect, it } from 'vitest';
import { eventsUrl } from '../../src/live';
import { rememberGatewayOrigin } from '../../src/api';

describe('event stream URL', () => {
  it('is relative in a browser tab', () => {
    expect(eventsUrl('omt_x', '')).toBe('/api/events?token=omt_x');
  });
  it('goes straight to the gateway from the desktop window', () => {
    expect(eventsUrl('a b', 'http://127.0.0.1:20128')).toBe('http://127.0.0.1:20128/api/events?token=a%20b');
  });
  it('needs a token', () => {
    expect(eventsUrl(null, '')).toBeNull();
  });
  it('remembers the origin of the announced endpoint', () => {
    rememberGatewayOrigin('http://127.0.0.1:31234/v1');
    expect(sessionStorage.getItem('omniroute.gatewayOrigin')).toBe('http://127.0.0.1:31234');
    rememberGatewayOrigin('not a url');
    expect(sessionStorage.getItem('omniroute.gatewayOrigin')).toBe('http://127.0.0.1:31234');
  });
});
