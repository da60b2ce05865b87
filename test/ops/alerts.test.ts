import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * ops/prometheus-rules.yml is valid (promtool check rules) and each alert fires on the series that
 * should raise it and stays quiet on healthy ones (promtool test rules, ops/tests/). promtool comes
 * from Debian's `prometheus` package, which CI installs; without it these tests say so and skip,
 * except under CI, where its absence fails.
 */
const root = new URL('../../', import.meta.url).pathname;
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const available = promtool.status === 0;
if (!available && process.env.CI) throw new Error('promtool is missing: apt-get install prometheus');
if (!available) console.warn('promtool not found (apt-get install prometheus): alert rule tests skipped');

describe.skipIf(!available)('alerting rules', () => {
  const run = (...args: string[]) => spawnSync('promtool', args, { cwd: root, encoding: 'utf8' });

  it('pass promtool check rules', () => {
    const r = run('check', 'rules', 'ops/prometheus-rules.yml');
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });

  it('pass their promtool unit tests', () => {
    const r = run('test', 'rules', 'ops/tests/prometheus-rules.test.yml');
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });
});
