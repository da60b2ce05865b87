import { Piscina } from 'piscina';
import type { PolicyDocument } from './policy-pdf.ts';

/** Policies handed to a PDF thread before it has finished the one it renders. */
const TASKS_PER_THREAD = 4;

export interface PolicyRenderer {
  render(d: PolicyDocument): Promise<Buffer>;
  /** Ends the threads (after the renders under way). */
  close(): Promise<void>;
}

/**
 * Policy PDFs rendered on worker threads (piscina), so that a backlog of issuance does not hold
 * the event loop (and every HTTP request behind it) for 1.6–1.9 ms a policy (2.6–2.9 ms with
 * pdfkit; npm run bench:pdf). The threads start on the first render, not with the service (the
 * command line and most tests render none). `threads` 0 renders on the calling thread.
 */
export function policyRenderer(threads: number): PolicyRenderer {
  // The PDF writer and fontkit (with its fonts' parsers and decompressors) are loaded by the thread
  // that renders, not by every process that might: the event loop of a service with PDF threads,
  // the command line and most tests never render, and the modules' sources cost each one megabytes
  // of heap.
  if (threads === 0) {
    return {
      render: async (d) => (await import('./policy-pdf.ts')).renderPolicyPdf(d),
      close: async () => {},
    };
  }
  let pool: Piscina<PolicyDocument, Uint8Array> | undefined;
  const worker = new URL(`./pdf-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  return {
    async render(d) {
      pool ??= new Piscina({
        filename: worker.href,
        minThreads: threads,
        maxThreads: threads,
        // Each thread holds its next policies already, not only the one it renders. With one at a
        // time, a thread that finished waited for the event loop (busy with the database's
        // replies) to take its answer and hand it the next: under a burst it was on a CPU only
        // 56–63 % of the time with sixteen renders queued behind it. A burst drained at 176 orders
        // a second on average, against 213 with four (npm run bench:issuance, eight alternating
        // pairs, four faster in seven), at less CPU an order. Renders in one thread still run one
        // after another: a policy is synchronous work once the fonts are in.
        concurrentTasksPerWorker: TASKS_PER_THREAD,
        // A policy was ~20 MB of short-lived objects (fontkit's tables, pdfkit's streams) before its
        // words' layouts and glyphs were kept, about 1 MB with pdfkit, about 0.4 MB with our own
        // writer (pdf-writer.ts). The thread keeps ~25 MB (the parsed faces, the layout memo). A
        // young generation capped at 48 MB costs no measurable CPU (12 MB cost a third
        // more: objects promoted before they died); the old generation's cap keeps V8 from growing
        // the thread's heap far past that.
        resourceLimits: { maxYoungGenerationSizeMb: 48, maxOldGenerationSizeMb: 96 },
        // Run from TypeScript sources (npm start, the tests): each thread loads them as the main
        // thread does.
        ...(worker.pathname.endsWith('.ts') ? { execArgv: ['--import', 'tsx'] } : {}),
      });
      const bytes = await pool.run(d);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    async close() {
      await pool?.close();
      pool = undefined;
    },
  };
}
