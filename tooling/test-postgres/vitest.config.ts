import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // initdb + start is ~1 s here, but a loaded 2-core CI box can be many times slower.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
