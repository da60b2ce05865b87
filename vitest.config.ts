import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each PGlite instance costs ~300 MB and ~4 s: few files at once on a 2-core machine.
    maxWorkers: 2,
    fileParallelism: true,
    pool: 'forks',
  },
});
