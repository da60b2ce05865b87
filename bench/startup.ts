import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startScript } from './processes.ts';

/**
 * `npm run bench:startup`: how long `npm start` takes to answer /healthz on the embedded database,
 * on a fresh DATA_DIR (initdb, migrations, the demo seed) and on an existing one (the server starts
 * on its cluster). Each start is a new process, stopped with SIGTERM before the next; medians of
 * BENCH_STARTS (default 5) starts each.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const STARTS = Number(process.env.BENCH_STARTS || 5);
const PORT = 3000 + Math.floor(Math.random() * 1000) + 20_000;

async function startOnce(dataDir: string): Promise<number> {
  const started = performance.now();
  const start = startScript();
  const child = spawn(process.execPath, [...start.nodeArgs, 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...start.env,
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(PORT),
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error('the service exited during start');
      try {
        const res = await fetch(`http://127.0.0.1:${PORT}/healthz`);
        if (res.ok) return performance.now() - started;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const fresh: number[] = [];
const existing: number[] = [];
for (let i = 0; i < STARTS; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'polita-startup-'));
  try {
    fresh.push(await startOnce(dir));
    existing.push(await startOnce(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const fmt = (xs: number[]) =>
  `median ${(median(xs) / 1000).toFixed(2)} s (${xs.map((x) => (x / 1000).toFixed(2)).join(', ')})`;
console.log(`npm start to /healthz, ${STARTS} starts each`);
console.log(`  fresh DATA_DIR (initdb):  ${fmt(fresh)}`);
console.log(`  existing DATA_DIR:        ${fmt(existing)}`);
