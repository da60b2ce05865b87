import type { FastifyInstance } from 'fastify';

/**
 * Answers leave together at the end of the event loop's turn (decision 0105): the root's `onSend`
 * step, the first of each answer's, waits for a `setImmediate`, and then the turn's answers go on
 * one after another: a route's own `onSend` steps run after the wait (an idempotent route stores its
 * answer then, so its answer leaves after that write, not with the turn's others). A write that
 * finds its reader asleep has to wake it, and on a virtual machine waking a process on another CPU
 * costs more than the write; written together, the first wakes the reader and the rest find it
 * awake. An answer waits at most for the rest of the turn it was finished in (the synchronous work
 * of that turn's other handlers), never for any I/O.
 *
 * It uses only Fastify's `onSend` hook, so everything above and below is as before: headers,
 * status and payload are Fastify's, and Node writes the answer as it always does.
 */
export function installRepliesAtEndOfTurn(app: FastifyInstance): void {
  let due: (() => void)[] = [];
  const sendAll = () => {
    const now = due;
    due = [];
    for (const send of now) {
      try {
        send();
      } catch (err) {
        // One answer failing to be written must not keep the others of its turn.
        app.log.error({ err }, 'an answer could not be written');
      }
    }
  };
  app.addHook('onSend', (_request, _reply, payload, done) => {
    if (due.length === 0) setImmediate(sendAll);
    due.push(() => done(null, payload));
  });
}
