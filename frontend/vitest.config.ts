import { defineConfig } from 'vitest/config';

// Unit tests of the pure modules (and a little DOM) in a happy-dom window;
// they never touch the network. The browser end-to-end test is separate:
// tests/browser/dashboard.e2e.test.mjs, run by `npm run test:browser`.
export default defineConfig({
  test: {
    environment: 'happy-dom',
    include: ['tests/unit/**/*.test.ts'],
    restoreMocks: true,
  },
});
