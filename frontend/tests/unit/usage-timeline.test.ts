import { describe, expect, it } from 'vitest';
import { segmentLabel } from '../../src/views/usage';

describe('segmentLabel', () => {
  it.each([
    [{ kind: 'breaker', state: 'OPEN' }, 'breaker OPEN'],
    [{ kind: 'cooldown', state: 'cooling_down', connection: 'work' }, 'work cooling down'],
    [{ kind: 'model_lock', state: 'locked', connection: 'work' }, 'work: models locked'],
    [{ kind: 'model_lock', state: 'locked' }, 'connection: models locked'],
  ])('%o → %s', (seg, want) => {
    expect(segmentLabel(seg)).toBe(want);
  });
});
