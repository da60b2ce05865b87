import { spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMMAND_DOCS,
  isSession,
  npmScript,
  scriptArgs,
  shellBlocks,
  type ShellBlock,
} from '../support/doc-commands.ts';
import { startHarness, TEST_SECRET_KEY, type Harness } from '../support/harness.ts';

/**
 * Every shell command the README and the guides show works as written. Blocks that set shell
 * variables run whole, in one bash, against a service listening on loopback (the documents'
 * `http://127.0.0.1:3000` and `./data/` stand for its address and its DATA_DIR). `npm run call` and
 * `npm run admin` lines run one by one against this file's database: the API or the command may
 * refuse (exit 1: an id in a document names no order here), but never fail to understand the line
 * (exit 2). Other `npm run` lines must name a script of package.json, `node examples/…` a file that
 * exists; anything else must be one of the outside tools the documents name on purpose.
 */
const repo = new URL('../../', import.meta.url).pathname;
const scripts = Object.keys(
  (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts,
);
const blocks = shellBlocks();
const sessions = blocks.filter(isSession);
const single = blocks
  .filter((b) => !isSession(b))
  .flatMap((b) => b.lines.map((line) => ({ file: b.file, line })));

/** Tools the documents show on purpose, which this test does not run. */
const OUTSIDE_TOOLS =
  /^(?:(?:createdb|pg_dump|pg_restore|psql|apt-get|runuser|openssl rand)\b|printf '%s\.%s\.' "\$T" "\$EVENT_ID")/;
/**
 * Commands that would reach a partner's webhook URL or need what this test does not set up (backup
 * and restore write and read files outside the repository; test/ops/backup.test.ts runs them).
 */
const NOT_RUN = /\b(webhook-test|resend-webhook)\b|admin -- (backup|restore) /;

let h: Harness;
let url: string;
let scratch: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  h = await startHarness();
  url = await h.listen();
  scratch = mkdtempSync(join(tmpdir(), 'polita-doc-commands-'));
  await h.setClock(null);
  writeFileSync(join(h.dataDir, 'sandbox-credentials.json'), JSON.stringify({ ...h.demo, url }));
  env = {
    ...process.env,
    ADMIN_TOKEN: h.adminToken,
    DATA_DIR: h.dataDir,
    DATABASE_URL: h.databaseUrl,
    SECRET_KEY: TEST_SECRET_KEY,
    SANDBOX: 'true',
    LOG_LEVEL: 'silent',
    POLITA_URL: '',
    POLITA_PARTNER_ID: '',
    POLITA_PARTNER_SECRET: '',
  };
});
afterAll(async () => {
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Runs a script in bash without blocking this process, which serves the requests it makes. */
function bash(
  script: string,
  cwd = repo,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
const local = (text: string) =>
  text.replaceAll('http://127.0.0.1:3000', url).replaceAll('./data/', `${h.dataDir}/`);

describe('documented commands', () => {
  it('are found in every document', () => {
    for (const file of COMMAND_DOCS.filter((f) => f !== 'docs/vignette-ro.md' && f !== 'docs/wallet.md')) {
      expect(
        blocks.some((b) => b.file === file),
        `${file} has no sh block`,
      ).toBe(true);
    }
  });

  it('read the address of every curl from the sandbox’s credentials, not a fixed port', () => {
    const curls = blocks
      .filter((b) => b.file === 'README.md')
      .flatMap((b) => b.lines.filter((l) => /^curl /.test(l)));
    expect(curls.length).toBeGreaterThan(0);
    for (const line of curls) expect(line).toMatch(/^curl -sS "\$BASE\//);
  });

  it.each(sessions.map((b: ShellBlock) => [b.file, b.lines.join('\n')]))(
    '%s: this block runs whole and exits 0',
    async (_file, script) => {
      // A block that runs no npm script runs in a scratch directory: it may write files there.
      const cwd = script.includes('npm run') ? repo : scratch;
      const run = await bash(local(script), cwd);
      expect(run.status, `${run.stderr}\n${run.stdout}`).toBe(0);
      // Signed and authorised as the documents say: never a 401 or 403.
      expect(run.stdout).not.toMatch(/"statusCode":40[13]/);
      if (script.includes('/v1/get-offers')) expect(run.stdout).toContain('"offers"');
    },
  );

  it.each(single.map(({ file, line }) => [file, line]))('%s: %s', async (_file, line) => {
    const script = npmScript(line);
    if (script) {
      expect(scripts, `npm run ${script} is not a script of package.json`).toContain(script);
      if ((script === 'call' || script === 'admin') && !NOT_RUN.test(line)) {
        const run = await bash(local(line));
        expect([0, 1], `exit ${run.status}: ${run.stderr}\n${run.stdout}`).toContain(run.status);
        if (run.status === 0 && line.includes(' -s ')) expect(() => JSON.parse(run.stdout)).not.toThrow();
      }
      if (script === 'admin' && NOT_RUN.test(line)) {
        const usage = await bash('npm run -s admin -- --help');
        const [command, sub] = scriptArgs(line);
        const text = `${usage.stdout}${usage.stderr}`;
        expect(text).toMatch(new RegExp(`^  ${command} (${sub} )?`, 'm'));
      }
      return;
    }
    const example = /^node (examples\/\S+)/.exec(line);
    if (example) return expect(existsSync(join(repo, example[1]!)), example[1]).toBe(true);
    if (/^(npm (install|start|test|ci)|DATABASE_URL=\S+ npm (start|test))\b/.test(line)) return;
    expect(line, 'a command the test does not know: run it here, or add its tool to OUTSIDE_TOOLS').toMatch(
      OUTSIDE_TOOLS,
    );
  });

  it("docs/partner-guide.md: the shell check of a webhook's signature prints its v2", () => {
    const line = single.find((s) => s.line.startsWith(`printf '%s.%s.' "$T" "$EVENT_ID"`))?.line;
    expect(line, 'the partner guide shows how to check a delivery with openssl').toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'polita-webhook-check-'));
    try {
      const body = '{"orderId":"IAI123456ABC","status":"completed"}';
      writeFileSync(join(dir, 'body.json'), body);
      const T = '1764150000';
      const run = spawnSync('bash', ['-o', 'pipefail', '-c', line!], {
        cwd: dir,
        env: { ...process.env, T, EVENT_ID: 'evt_0123456789abcdef01234567', SECRET: h.demo.secret },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).toBe(0);
      const v2 = createHmac('sha512', h.demo.secret)
        .update(`${T}.evt_0123456789abcdef01234567.${body}`)
        .digest('hex');
      expect(run.stdout.trim()).toBe(v2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('links between the documents', () => {
  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
  const slug = (heading: string) =>
    heading
      .toLowerCase()
      .replace(/[`*_]/g, '')
      .replace(/[^\p{L}\p{N} -]/gu, '')
      .replace(/ /g, '-');
  const anchors = (file: string) =>
    new Set(
      [...readFileSync(join(repo, file), 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.trim())),
    );
  const records = readdirSync(join(repo, 'docs/decisions'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/decisions/${f}`);
  const files = [...COMMAND_DOCS, 'ARCHITECTURE.md', 'docs/benchmark-history.md', ...records];

  it.each(files)('%s: every relative link names a file and heading that exist', (file) => {
    const text = readFileSync(join(repo, file), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, anchor] = target!.split('#');
      const resolved = path ? join(file, '..', path) : file;
      expect(existsSync(join(repo, resolved)), `${file} links to ${target}`).toBe(true);
      if (anchor && resolved.endsWith('.md')) {
        expect(anchors(resolved), `${file} links to ${target}`).toContain(anchor);
      }
    }
  });
});
