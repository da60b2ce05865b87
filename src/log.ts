import pino, { type DestinationStream, type Logger } from 'pino';

/** Keys whose values never reach a log line, at any depth up to four (decision 0021). */
const SECRET_KEYS = [
  'authorization',
  'x-hmac-signature',
  'x-polita-signature',
  'secret',
  'secrets',
  'token',
  'adminToken',
  'metricsToken',
  'secretKey',
  'secretKeyPrevious',
  'password',
  // The console: its session cookie and the CSRF token of its forms.
  'cookie',
  'set-cookie',
  'x-csrf-token',
  'csrf_token',
  '_csrf',
];

/**
 * What pino censors: the Authorization, X-Hmac-Signature and X-Polita-Signature headers of a logged request (or of
 * anything carrying `headers`), and every `secret`, `secrets`, `token`, `adminToken` (and the like)
 * key down to four levels. Nothing logs these today; this keeps a future `log.error({ req, … })`
 * or an error object carrying a partner from writing one out.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-hmac-signature"]',
  'req.headers["x-polita-signature"]',
  'req.headers.cookie',
  ...SECRET_KEYS.flatMap((k) => {
    const key = /^\w+$/.test(k) ? k : `["${k}"]`;
    const at = (prefix: string) => (key.startsWith('[') ? `${prefix}${key}` : `${prefix}.${key}`);
    return [key, at('*'), at('*.*'), at('*.*.*')];
  }),
];

/** The service's logger (and the command line's): JSON lines with the redaction above. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[Redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
