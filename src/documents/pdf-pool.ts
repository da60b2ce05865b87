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
 * the event loop (and every HTTP request behind it) for the milliseconds each policy takes
 * (decision 0030). The threads start on the first render, not with the service (the command line
 * and most tests render none). `threads` 0 renders on the calling thread.
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
        // replies) to take its answer and hand it the next, and idled under a burst with renders
        // queued behind it (decision 0030). Renders in one thread still run one after another: a
        // policy is synchronous work once the fonts are in.
        concurrentTasksPerWorker: TASKS_PER_THREAD,
        // A policy leaves little garbage once its words' layouts and glyphs are kept, and the thread
        // keeps the parsed faces and the layout memo. The young generation's cap costs no
        // measurable CPU, where a smaller one promoted objects before they died (decision 0030); the
        // old generation's cap keeps V8 from growing the thread's heap far past what it keeps.
        resourceLimits: { maxYoungGenerationSizeMb: 48, maxOldGenerationSizeMb: 96 },
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
