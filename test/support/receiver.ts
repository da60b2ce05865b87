import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request a receiver took, and when (Date.now()) it had read the whole body. */
export interface Hit {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A listening receiver: its address (http://127.0.0.1:port), and how to end it. */
export interface Receiver {
  base: string;
  dropConnections(): void;
  close(): Promise<void>;
}

/**
 * A webhook receiver on a random loopback port: each request, read whole, is pushed onto `hits`, and
 * `answer` replies to it (200 `ok` unless given). dropConnections() ends every open connection (a
 * request left unanswered with it); close() does that, then stops listening.
 */
export async function startHookReceiver(
  hits: Hit[],
  answer: (res: ServerResponse, hit: Hit) => void = (res) => res.writeHead(200).end('ok'),
): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = {
        method: req.method!,
        path: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        at: Date.now(),
      };
      hits.push(hit);
      answer(res, hit);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dropConnections = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropConnections,
    close: async () => {
      dropConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
