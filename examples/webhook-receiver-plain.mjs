// A webhook receiver without @polita/client: node:crypto alone checks each delivery's signature and
// timestamp, answers 204, and refuses anything else with 400. Run: node examples/webhook-receiver-plain.mjs
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { credentials } from './sandbox.mjs';

const { secret } = credentials();
const port = Number(process.env.RECEIVER_PORT || 8080);
const TOLERANCE_SECONDS = 300;
const seen = new Set();

/**
 * The reason a delivery is refused, or null when it is genuine and fresh. The v2 signature covers
 * the event id as well, so a captured delivery cannot come back under a new id.
 */
function refusal(signatureHeader, eventId, rawBody) {
  if (!eventId) return 'no X-Polita-Event-Id header';
  if (!signatureHeader) return 'no X-Polita-Signature header';
  // The t inside the signature header is the signed timestamp; X-Polita-Timestamp only repeats it.
  const t = /(?:^|,)t=(\d+)/.exec(signatureHeader)?.[1];
  if (t === undefined) return 'no timestamp in X-Polita-Signature';
  if (Math.abs(Date.now() / 1000 - Number(t)) > TOLERANCE_SECONDS) return 'timestamp too old or too new';
  const expected = createHmac('sha512', secret).update(`${t}.${eventId}.`).update(rawBody).digest();
  // One v2 per valid secret during a secret rotation: any of them may match.
  const valid = [...signatureHeader.matchAll(/(?:^|,)v2=([0-9a-f]{128})/g)].some(([, v2]) =>
    timingSafeEqual(expected, Buffer.from(v2, 'hex')),
  );
  return valid ? null : 'no v2 signature matches';
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    // The raw body, exactly as received: the signature covers these bytes, not a re-serialisation.
    const rawBody = Buffer.concat(chunks);
    const eventId = req.headers['x-polita-event-id'];
    const why = refusal(req.headers['x-polita-signature'], eventId, rawBody);
    if (why) {
      console.log(`refused: ${why}`);
      return res.writeHead(400).end();
    }
    const event = JSON.parse(rawBody.toString('utf8'));
    // Delivery is at least once: the same event id may come again; act on it once.
    const repeat = seen.has(eventId);
    seen.add(eventId);
    console.log(`${event.status} ${event.orderId} (event ${eventId}${repeat ? ', again' : ''})`);
    res.writeHead(204).end();
  });
});
server.listen(port, '127.0.0.1', () =>
  console.log(`receiving webhooks on http://127.0.0.1:${server.address().port}/hook`),
);
