// The partner to act as: POLITA_URL, POLITA_PARTNER_ID and POLITA_PARTNER_SECRET, or the sandbox's demo
// partner, which `npm start` writes to DATA_DIR/sandbox-credentials.json (./data by default).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function credentials() {
  let file = {};
  try {
    file = JSON.parse(readFileSync(join(process.env.DATA_DIR ?? 'data', 'sandbox-credentials.json'), 'utf8'));
  } catch {
    // no sandbox file: the environment must say
  }
  const partnerId = process.env.POLITA_PARTNER_ID || file.id;
  const secret = process.env.POLITA_PARTNER_SECRET || file.secret;
  const baseUrl = process.env.POLITA_URL || file.url || 'http://127.0.0.1:3000';
  if (!partnerId || !secret) {
    console.error(
      'No partner: start the sandbox (npm start) or set POLITA_PARTNER_ID and POLITA_PARTNER_SECRET',
    );
    process.exit(2);
  }
  return { baseUrl, partnerId, secret };
}
