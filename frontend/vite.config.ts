import { defineConfig } from 'vite';

// The gateway serves this SPA at /dashboard/ (embedded from frontend/dist) and
// the management API at /api. In dev, Vite proxies both API prefixes to a
// locally running gateway.
const gateway = 'http://127.0.0.1:20128';

export default defineConfig({
  base: '/dashboard/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
  },
  server: {
    proxy: {
      '/api': { target: gateway, changeOrigin: true },
      '/v1': { target: gateway, changeOrigin: true },
    },
  },
});
