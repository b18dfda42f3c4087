import { describe, expect, it } from 'vitest';
import { safeWebUrl } from '../../src/lib/safeurl';

describe('safeWebUrl', () => {
  it('takes https pages and loopback http only', () => {
    for (const ok of ['https://github.com/login/device', 'http://127.0.0.1:8080/login/device', 'http://localhost/x']) expect(safeWebUrl(ok), ok).toBe(true);
  });
  it('refuses script, data, relative, credentialed and plain-http remote URLs', () => {
    for (const bad of ['javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:alert(1)', 'data:text/html,<script>1</script>', '/login/device', 'http://github.com/login/device', 'https://u:p@github.com/', 'vbscript:x', ''])
      expect(safeWebUrl(bad), bad).toBe(false);
  });
});
