/**
 * The embedded database could not start for a reason its user can fix: the message names the
 * problem and the remedy, and main prints it without a stack and exits non-zero.
 */
export class EmbeddedDatabaseError extends Error {
  override name = 'EmbeddedDatabaseError';
}
