// A webhook receiver: each delivery is verified with @polita/client (signature, timestamp) and
// answered 204; anything else is refused with 400. Run: node examples/webhook-receiver.mjs
import { createServer } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@polita/client';
import { credentials } from './sandbox.mjs';

const { secret } = credentials();
const port = Number(process.env.RECEIVER_PORT || 8080);
const seen = new Set();

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      // The raw body, exactly as received: the signature covers these bytes.
      const event = verifyWebhook({ body: Buffer.concat(chunks), headers: req.headers, secret });
      // Delivery is at least once: the same event id may come again; act on it once.
      const repeat = seen.has(event.eventId);
      seen.add(event.eventId);
      console.log(`${event.status} ${event.orderId} (event ${event.eventId}${repeat ? ', again' : ''})`);
      res.writeHead(204).end();
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      console.log(`refused: ${err.message}`);
      res.writeHead(400).end();
    }
  });
});
server.listen(port, '127.0.0.1', () =>
  console.log(`receiving webhooks on http://127.0.0.1:${server.address().port}/hook`),
);
