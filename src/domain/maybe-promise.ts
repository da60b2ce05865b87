/**
 * A value a port may answer at once, when it has it in memory (the sandbox vehicle registry, the
 * sandbox clock between its re-reads), or later. Each `await` of a value that is already there still
 * costs a trip through the microtask queue and a promise to collect, and get-offers rca awaited
 * five such values on a path held to decision 0022's target.
 */
export type MaybePromise<T> = T | Promise<T>;

/**
 * `f` of `value`: at once when it is a value, once it settles when it is a promise. A throw of `f`
 * on a value is thrown here, synchronously; on a promise it rejects the promise answered.
 */
export function andThen<T, U>(value: MaybePromise<T>, f: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}
