import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signatureHeader } from '../signature.ts';

/**
 * `npm run call -- <endpoint> '<json>'`: signs a body and POSTs it to /v1/<endpoint>, printing the
 * status and the answer. Credentials: POLITA_PARTNER_ID and POLITA_PARTNER_SECRET, or the sandbox
 * demo partner that `npm start` wrote to DATA_DIR/sandbox-credentials.json. POLITA_URL picks the server.
 */
const [endpoint, body = '{}'] = process.argv.slice(2);
if (!endpoint) {
  console.error(
    `usage: npm run call -- <get-offers|create-order|confirm-order|get-order|get-balance|pay-order-from-balance> '<json body>'`,
  );
  process.exit(2);
}

function credentials(): { id: string; secret: string; url: string } {
  const fromEnv = process.env.POLITA_PARTNER_ID && process.env.POLITA_PARTNER_SECRET;
  let file: { id?: string; secret?: string; url?: string } = {};
  if (!fromEnv) {
    const path = join(process.env.DATA_DIR || './data', 'sandbox-credentials.json');
    try {
      file = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      console.error(
        `Set POLITA_PARTNER_ID and POLITA_PARTNER_SECRET, or run \`npm start\` once so that ${path} exists.`,
      );
      process.exit(2);
    }
  }
  return {
    id: process.env.POLITA_PARTNER_ID || file.id!,
    secret: process.env.POLITA_PARTNER_SECRET || file.secret!,
    url: (process.env.POLITA_URL || file.url || 'http://127.0.0.1:3000').replace(/\/+$/, ''),
  };
}

try {
  JSON.parse(body);
} catch {
  console.error('The body is not valid JSON (quote it in single quotes in the shell).');
  process.exit(2);
}
const { id, secret, url } = credentials();
// Sign exactly the bytes that are sent: the string is serialised once and never re-serialised.
const res = await fetch(`${url}/v1/${endpoint}`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-hmac-signature': signatureHeader(id, secret, body) },
  body,
});
const text = await res.text();
let pretty = text;
try {
  pretty = JSON.stringify(JSON.parse(text), null, 2);
} catch {
  /* not JSON: print as is */
}
console.log(`HTTP ${res.status}\n${pretty}`);
process.exit(res.ok ? 0 : 1);
