/**
 * @polita/client: the Polita partner API for Node 20 and later, with no dependencies (global fetch
 * and node:crypto). See README.md.
 */
export { Polita, TERMINAL_STATUSES } from './client.js';
export type { PolitaOptions, WaitForOrderOptions, WriteOptions } from './client.js';
export {
  PolitaAuthenticationError,
  PolitaConflictError,
  PolitaConnectionError,
  PolitaError,
  PolitaNotFoundError,
  PolitaProductRuleError,
  PolitaRateLimitError,
  PolitaServerError,
  PolitaTimeoutError,
  PolitaValidationError,
  PolitaWalletUnavailableError,
  WaitForOrderTimeoutError,
  WebhookVerificationError,
} from './errors.js';
export { verifyWebhook } from './webhook.js';
export type { VerifyWebhookOptions, WebhookEvent, WebhookStatus } from './webhook.js';
export type * from './types.js';
