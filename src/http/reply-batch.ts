import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

type WriteCallback = (err?: Error | null) => void;

/**
 * Answers leave in batches: what the server writes to its connections during one turn of the
 * event loop reaches the kernel at the end of that turn (one `setImmediate`), the writes one after
 * another, rather than each the moment its handler finishes. A write that finds its reader asleep
 * has to wake it, and on these virtual machines a wake-up of a process on the other CPU is an
 * inter-processor interrupt that costs more than the write: written one at a time, between the
 * handlers' work, nearly every reply paid one. Written together, the first wakes the reader and the
 * rest find it awake (README, "What get-offers costs"). An answer waits at most for the rest of
 * the turn it was finished in: the synchronous work of that turn's other handlers, not any I/O.
 *
 * It is done at the connection, below HTTP: each socket's `_write`/`_writev` (the stream's own
 * write, which Node's HTTP response calls once it has ended) queues the write instead of making it.
 * Everything above sees what it saw before: `res.end()` has ended the response, `reply.sent` is
 * true, headers are sent, and a hook that answers stops the request as it did. The stream itself
 * waits for the write's callback, so its order, backpressure and `end()` are kept. A socket
 * destroyed in the turn it wrote writes first (Node and Fastify answer a malformed or timed-out
 * request and destroy its socket in one go).
 */
export function installReplyBatching(app: FastifyInstance): void {
  // The sockets with a write waiting for the end of this turn, each as its writeNow.
  let due: (() => void)[] = [];
  const flush = () => {
    const writers = due;
    due = [];
    for (const writeNow of writers) writeNow();
  };
  const later = (writeNow: () => void) => {
    if (due.length === 0) setImmediate(flush);
    due.push(writeNow);
  };
  app.server.on('connection', (socket: Socket) => {
    const write = socket._write;
    const writev = socket._writev!;
    const destroy = socket._destroy;
    // The stream hands its socket one write at a time and waits for its callback: at most one is
    // queued. Kept as values, not a closure a write (tsx names every closure it makes, at a cost).
    let pending: WriteCallback | null = null;
    let chunks: unknown;
    let encoding: BufferEncoding = 'utf8';
    let vector = false;
    // The stream's callback of the write being made. Called back on the next tick, never from inside
    // the write: made from the flush, a write the kernel took at once would otherwise finish its
    // response (`finish`, Fastify's onResponse, keep-alive) before the next socket of the batch is
    // written, and a throw there would leave the rest of the batch unwritten.
    let inflight: WriteCallback | null = null;
    const written = (err?: Error | null) => {
      const cb = inflight!;
      inflight = null;
      process.nextTick(cb, err);
    };
    const writeNow = () => {
      const cb = pending;
      if (cb === null) return;
      const data = chunks;
      pending = null;
      chunks = undefined;
      inflight = cb;
      if (vector) writev.call(socket, data as { chunk: unknown; encoding: BufferEncoding }[], written);
      else write.call(socket, data, encoding, written);
    };
    socket._write = (chunk: unknown, enc: BufferEncoding, cb: WriteCallback) => {
      pending = cb;
      chunks = chunk;
      encoding = enc;
      vector = false;
      later(writeNow);
    };
    socket._writev = (all: { chunk: unknown; encoding: BufferEncoding }[], cb: WriteCallback) => {
      pending = cb;
      chunks = all;
      vector = true;
      later(writeNow);
    };
    // Destroyed in the turn it wrote (Node and Fastify answer a malformed or timed-out request, then
    // destroy the socket), it writes first, as it would have without the batching.
    socket._destroy = (err: Error | null, cb: (err?: Error | null) => void) => {
      writeNow();
      destroy.call(socket, err, cb);
    };
  });
}
