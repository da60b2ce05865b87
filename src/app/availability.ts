/** The database's availability as the HTTP surfaces see it (decision 0050). */
export {
  isDatabaseUnavailable,
  RETRY_AFTER_SECONDS,
  unavailableMessage,
  type DatabaseHealth,
} from '../db/availability.ts';
