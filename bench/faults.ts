import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  drill,
  embeddedBack,
  embeddedPostmaster,
  ownPostgres,
  prepareDemo,
  reconcile,
  sleep,
  spawnPolita,
  webhookReceiver,
  smallDisk,
  type DrillResult,
  type OwnPostgres,
  type Polita,
} from './fault-drill.ts';

/**
 * `npm run bench:faults`: each database fault of decision 0050 under a payment load (4 clients),
 * on a service of its own: the embedded postmaster SIGKILLed, an external server restarted (fast,
 * then immediate shutdown), every backend terminated, and, as root, the embedded DATA_DIR's disk
 * filled. For each: how long /readyz was not 200, the answers given meanwhile by status, the
 * acknowledged payments lost (the target is none), and the time from the fault's end to ready.
 * FAULTS=embedded-kill,fast,… runs some of them.
 */

const TEST_SECRET_KEY = '5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7';
const DOWN_MS = Number(process.env.FAULT_DOWN_MS ?? 5000);

interface Row {
  fault: string;
  result: DrillResult;
  reconciled: boolean;
}

async function onEmbedded(
  fault: string,
  run: (p: Polita, dir: string) => Promise<void>,
  dir = mkdtempSync(join(tmpdir(), 'polita-fault-')),
): Promise<Row> {
  const hook = await webhookReceiver();
  const p = await spawnPolita({ DATA_DIR: dir });
  try {
    await prepareDemo(p, hook.url);
    const result = await drill(p, hook, () => run(p, dir));
    const books = await reconcile({ DATA_DIR: dir });
    if (process.env.FAULT_LOG) console.error(p.output(), readFileSync(join(dir, 'postgresql.log'), 'utf8'));
    return { fault, result, reconciled: books.code === 0 };
  } finally {
    await p.stop();
    await hook.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onOwnServer(fault: string, run: (server: OwnPostgres) => Promise<void>): Promise<Row> {
  const server = await ownPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'polita-fault-'));
  const env = { DATABASE_URL: server.url, DATA_DIR: dir, SECRET_KEY: TEST_SECRET_KEY };
  const hook = await webhookReceiver();
  const p = await spawnPolita(env);
  try {
    await prepareDemo(p, hook.url);
    const result = await drill(p, hook, () => run(server));
    const books = await reconcile(env);
    return { fault, result, reconciled: books.code === 0 };
  } finally {
    await p.stop();
    await hook.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const FAULTS: Record<string, () => Promise<Row | undefined>> = {
  'embedded-kill': () =>
    onEmbedded('embedded postmaster SIGKILL', async (_p, dir) => {
      const postmaster = embeddedPostmaster(dir)!;
      process.kill(postmaster, 'SIGKILL');
      await embeddedBack(dir, postmaster);
    }),
  fast: () =>
    onOwnServer(`external server down ${DOWN_MS / 1000} s (fast shutdown)`, async (s) => {
      await s.restart('fast', DOWN_MS);
    }),
  immediate: () =>
    onOwnServer(`external server down ${DOWN_MS / 1000} s (immediate shutdown)`, async (s) => {
      await s.restart('immediate', DOWN_MS);
    }),
  terminate: () =>
    onOwnServer('every backend terminated', async (s) => {
      await s.terminateBackends();
    }),
};

FAULTS['disk-full'] = async () => {
  const disk = smallDisk();
  if (typeof disk === 'string') {
    console.error(`disk-full skipped: ${disk}`);
    return undefined;
  }
  try {
    return await onEmbedded(
      `DATA_DIR's disk full for ${DOWN_MS / 1000} s`,
      async () => {
        disk.fill();
        await sleep(DOWN_MS);
        disk.free();
      },
      disk.dir,
    );
  } finally {
    disk.unmount();
  }
};

const wanted = (process.env.FAULTS ?? Object.keys(FAULTS).join(',')).split(',');
const rows: Row[] = [];
for (const name of wanted) {
  const run = FAULTS[name];
  if (!run) throw new Error(`unknown fault ${name}; known: ${Object.keys(FAULTS).join(', ')}`);
  console.error(`fault: ${name} …`);
  const row = await run();
  console.error(JSON.stringify(row));
  if (row) rows.push(row);
  await sleep(1000);
}
console.log(
  '| fault | unready (s) | back to ready (s) | answers during the fault | other answers | acknowledged | lost | webhooks missing | reconcile |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const { fault, result: r, reconciled } of rows) {
  const answers = Object.entries(r.duringFault)
    .map(([s, n]) => `${n}× ${s}`)
    .join(', ');
  console.log(
    `| ${fault} | ${r.unreadySeconds.toFixed(1)} | ${r.recoverSeconds.toFixed(1)} | ${answers} | ${r.unexpected.length} | ${r.acknowledged} | ${r.lost.length} | ${r.webhooksMissing.length} | ${reconciled ? 'clean' : 'DIFFERENCES'} |`,
  );
}
