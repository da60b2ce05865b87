import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signatureHeader, timestampedSignatureHeader } from '../signature.ts';

/**
 * `npm run call -- <endpoint> '<json>'`: signs a body and POSTs it to /v1/<endpoint>, printing the
 * status and the answer. Credentials: POLITA_PARTNER_ID and POLITA_PARTNER_SECRET, or the sandbox
 * demo partner that `npm start` wrote to DATA_DIR/sandbox-credentials.json. The server: POLITA_URL,
 * else the one that wrote that file, else http://127.0.0.1:3000. Signed with the timestamped form,
 * X-Polita-Signature (decision 0045); POLITA_SIGNATURE=spec signs with the contract's original
 * X-Hmac-Signature (docs/api-reference.md#signing-requests).
 */
const [endpoint, body = '{}'] = process.argv.slice(2);
if (!endpoint) {
  console.error(
    `usage: npm run call -- <get-offers|create-order|confirm-order|get-order|get-balance|pay-order-from-balance|cancel-order|correct-order> '<json body>'`,
  );
  process.exit(2);
}

function credentials(): { id: string; secret: string; url: string } {
  const dataDir = process.env.DATA_DIR || './data';
  const path = join(dataDir, 'sandbox-credentials.json');
  let file: { id?: string; secret?: string; url?: string } = {};
  try {
    file = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    /* no sandbox credentials: the environment must name the partner */
  }
  const id = process.env.POLITA_PARTNER_ID || file.id;
  const secret = process.env.POLITA_PARTNER_SECRET || file.secret;
  if (!id || !secret) {
    console.error(
      `No partner to sign as: set POLITA_PARTNER_ID and POLITA_PARTNER_SECRET, or start the sandbox ` +
        `(npm start) with the same DATA_DIR (now ${dataDir}), which writes ${path}. ` +
        `With DATABASE_URL set, npm start writes no such file: use the demo id and secret it prints.`,
    );
    process.exit(2);
  }
  // The file's URL is the server that wrote it, whichever credentials sign.
  return {
    id,
    secret,
    url: (process.env.POLITA_URL || file.url || 'http://127.0.0.1:3000').replace(/\/+$/, ''),
  };
}

try {
  JSON.parse(body);
} catch {
  console.error('The body is not valid JSON (quote it in single quotes in the shell).');
  process.exit(2);
}
const form = process.env.POLITA_SIGNATURE || 'timestamped';
if (form !== 'timestamped' && form !== 'spec') {
  console.error(`POLITA_SIGNATURE must be timestamped (the default) or spec, got "${form}"`);
  process.exit(2);
}
const { id, secret, url } = credentials();
const signature =
  form === 'spec'
    ? { 'x-hmac-signature': signatureHeader(id, secret, body) }
    : { 'x-polita-signature': timestampedSignatureHeader(id, secret, endpoint, body) };
// Sign exactly the bytes that are sent: the string is serialised once and never re-serialised.
let res: Response;
try {
  res = await fetch(`${url}/v1/${endpoint}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signature },
    body,
  });
} catch (err) {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  console.error(
    `Cannot reach ${url} (${cause?.code ?? cause?.message ?? (err as Error).message}): is the service running ` +
      '(npm start)? POLITA_URL names another server.',
  );
  process.exit(2);
}
const text = await res.text();
let pretty = text;
try {
  pretty = JSON.stringify(JSON.parse(text), null, 2);
} catch {
  /* not JSON: print as is */
}
// The status on stderr and the answer alone on stdout, so that a shell can take the answer apart.
console.error(`HTTP ${res.status}`);
console.log(pretty);
process.exit(res.ok ? 0 : 1);
