/**
 * What one get-offers request allocates, and where: `npm run bench:alloc`. Starts the service in
 * this process (no workers) on a scratch database of the server at BENCH_PG, sends BENCH_REQUESTS
 * (default 20 000) signed get-offers rca through Fastify's `inject()` at 50 at a time, and prints
 * the bytes allocated a request (V8's GC profiler: what each collection freed, plus what is left)
 * three times, then the allocation sites by bytes a request (V8's sampling heap profiler, keeping
 * the objects collected since, so garbage shows as well as what lives), each with the three calls
 * above it. AB_BODY asks for another body. `inject()` allocates too: what light-my-request
 * allocates, or what it calls allocates directly, is left out of the sites (not of the total).
 *
 * Why: CPU a request moves by a few per cent from one run to the next on a shared virtual
 * machine, more than most changes to the request path; bytes a request are the same to within
 * 0.2 % from run to run, and the young generation's collections are a cost of every request
 * (docs/performance.md, "Get-offers' speed"). Use it to see what a change allocates, then judge
 * the change by requests a second with `npm run bench:ab`.
 */
import { Session } from 'node:inspector/promises';
import { GCProfiler } from 'node:v8';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { startService } from '../src/service.ts';
import { signatureHeader } from '../src/signature.ts';
import { scratchDatabase } from './anchors.ts';

const PG_SERVER = process.env.BENCH_PG || 'postgres://postgres@127.0.0.1:5432/postgres';
const REQUESTS = Number(process.env.BENCH_REQUESTS || 20_000);
const TOP = Number(process.env.BENCH_TOP || 30);
const body =
  process.env.AB_BODY || '{"product":"rca","vehicle":"100000001","duration":365,"idnx":"2003000000016"}';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

await scratchDatabase(PG_SERVER, 'polita_alloc', async (url) => {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: url,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    DEFAULT_REQUIRE_TIMESTAMPED_SIGNATURE: 'false',
  });
  const service = await startService(config, { workers: false, logger: createLogger('warn') });
  try {
    const demo = service.demo!;
    const request = {
      method: 'POST' as const,
      url: '/v1/get-offers',
      headers: {
        'content-type': 'application/json',
        'x-hmac-signature': signatureHeader(demo.id, demo.secret, body),
      },
      payload: body,
    };
    const load = async () => {
      let left = REQUESTS;
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          while (left-- > 0) {
            const r = await service.app.inject(request);
            if (r.statusCode !== 200) throw new Error(`get-offers answered ${r.statusCode}: ${r.body}`);
          }
        }),
      );
    };
    await load(); // warm up: compiled code, caches, the partner read once

    for (let run = 0; run < 3; run++) {
      const profiler = new GCProfiler();
      profiler.start();
      const before = process.memoryUsage().heapUsed;
      await load();
      const after = process.memoryUsage().heapUsed;
      const { statistics } = profiler.stop()!;
      const used = (s: (typeof statistics)[number]['beforeGC']) =>
        s.heapSpaceStatistics.reduce((sum, space) => sum + space.spaceUsedSize, 0);
      const freed = statistics.reduce((sum, gc) => sum + used(gc.beforeGC) - used(gc.afterGC), 0);
      console.log(
        `allocated ${((after - before + freed) / REQUESTS).toFixed(0)} bytes a request; ` +
          `${statistics.length} collections`,
      );
    }

    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    await load();
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: HeapNode } };
    session.disconnect();
    const sites = new Map<string, number>();
    const frame = ({ callFrame: f }: HeapNode) =>
      `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/')}:${f.lineNumber + 1}`;
    const walk = (node: HeapNode, stack: string[]) => {
      const here = [frame(node), ...stack];
      // inject()'s own objects: allocated in light-my-request, or by what it called directly.
      const injects = here.slice(0, 2).some((f) => f.includes('light-my-request/'));
      const site = here.slice(0, 4).join(' < ');
      if (node.selfSize > 0 && !injects) sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
      for (const child of node.children) walk(child, here);
    };
    walk(profile.head, []);
    console.log('\nbytes a request  site < its callers');
    for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, TOP))
      console.log(`${(bytes / REQUESTS).toFixed(0).padStart(16)}  ${site}`);
  } finally {
    await service.stop();
  }
});
