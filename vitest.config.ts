import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One PostgreSQL server for the run (the embedded one, or DATABASE_URL's) and a migrated template.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/no-warnings.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A 2-core machine runs the service, PostgreSQL and the test code: two files at a time.
    maxWorkers: 2,
    fileParallelism: true,
    pool: 'forks',
  },
});
