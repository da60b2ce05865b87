/** A process warning in one line: its name, its code if any, its message. */
export function describeWarning(w: Error & { code?: unknown }): string {
  return `${w.name}${typeof w.code === 'string' ? ` [${w.code}]` : ''}: ${w.message}`;
}
