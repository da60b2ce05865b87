import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

/**
 * Finding 9 is shown by `npm run bench:auth-timing` (decision 0046), not by a timed test: timings on
 * a shared machine would make a flaky test. This runs the benchmark briefly, so it keeps working: both
 * kinds of request are refused with 403 by the real signature check, and the table is printed.
 */
it('finding 9: an unknown partner id is refused faster than a known one (the benchmark runs)', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', '--import', 'tsx', 'bench/auth-timing.ts'],
    { env: { ...process.env, BENCH_SAMPLES: '20' }, timeout: 60_000 },
  );
  expect(stdout).toMatch(/^\| known \| \d+ \| \d+ \| \d+ \|$/m);
  expect(stdout).toMatch(/^\| unknown \| \d+ \| \d+ \| \d+ \|$/m);
  expect(stdout).toMatch(/^unknown \/ known median: \d+\.\d\d$/m);
});
