import { afterAll } from 'vitest';
import { describeWarning } from './warnings.ts';

/**
 * A green run prints no process warning: one emitted while a test file runs (a deprecation, a
 * listener leak, an experimental feature) fails that file, naming the warning. Registered for every
 * test file in vitest.config.ts; global-setup.ts does the same for the run's own process.
 */
const seen: string[] = [];
process.on('warning', (w) => seen.push(describeWarning(w)));

afterAll(() => {
  // This hook runs after the file's own afterAll hooks: their warnings are counted too.
  if (seen.length > 0) throw new Error(`process warnings during this file:\n${seen.join('\n')}`);
});
