import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

export default defineConfig({
  // So `vitest run --config tooling/test-postgres/vitest.config.ts` works from the repo root too.
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: {
    include: ['src/**/*.test.ts'],
    // initdb + start takes about a second here, but a loaded 2-core CI box can be many times slower.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
