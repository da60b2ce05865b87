/**
 * Reads by key that leave in batches: every key asked for during one turn of the event loop goes
 * to the database in one statement at the end of that turn (one `setImmediate`), at most `max` keys
 * a statement, and each caller gets its own row back.
 *
 * Why: a statement sent is a write to a PostgreSQL session's socket, and on these virtual machines
 * waking the backend that reads it costs more than the read. Under many connections get-order's
 * main thread was mostly those writes, one per request, each to another backend of the pool
 * (decision 0027). Read together, the requests of one turn cost one write, one wake-up and one
 * result.
 *
 * Only for reads outside a transaction, whose answer may be any committed state from the caller's
 * call on: the statement starts after every call it answers, so it sees all that was committed
 * before them (a partner's create-order answered before its get-order was sent, for one). A failed
 * statement fails each of its callers with its error. A key asked for twice in a turn is read once.
 */
export function batchedRead<V>(
  read: (keys: string[]) => Promise<Map<string, V>>,
  max = 100,
): (key: string) => Promise<V | undefined> {
  // The keys of this turn, each with its callers.
  let due = new Map<string, Waiter<V>[]>();
  const send = (batch: Map<string, Waiter<V>[]>) => {
    read([...batch.keys()]).then(
      (found) => {
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
      },
      (err: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      },
    );
  };
  const flush = () => {
    if (due.size === 0) return; // sent full, before the end of the turn
    const batch = due;
    due = new Map();
    send(batch);
  };
  return (key) =>
    new Promise<V | undefined>((resolve, reject) => {
      const waiters = due.get(key);
      if (waiters) {
        waiters.push({ resolve, reject });
        return;
      }
      if (due.size === 0) setImmediate(flush);
      due.set(key, [{ resolve, reject }]);
      // A full batch leaves now; the turn's later keys start the next one, sent at the end of the turn.
      if (due.size >= max) {
        const batch = due;
        due = new Map();
        send(batch);
      }
    });
}

interface Waiter<V> {
  resolve: (value: V | undefined) => void;
  reject: (err: unknown) => void;
}
