import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Above this share of MAX_CONNECTIONS, a new connection makes room by closing others (decision 0083). */
export const SHED_ABOVE = 0.9;

/**
 * Slow clients, many addresses (decision 0083): request and keep-alive timeouts end a slow
 * connection after seconds, but until then many addresses together can hold every connection the
 * server allows, and a new client would be refused at the door. So when more than 90 % of
 * `maxConnections` are open, each new connection first closes others: the idle keep-alive ones
 * (Node's own `closeIdleConnections`), then those whose request has not fully arrived, oldest first.
 * A connection whose request has arrived whole and is being answered is never closed.
 */
export function shedNearLimit(server: Server, maxConnections: number): void {
  const keep = Math.max(1, Math.floor(maxConnections * SHED_ABOVE));
  // Open connections in the order they were opened: the oldest first.
  const open = new Set<Socket>();
  // The response a connection is on now; one WeakMap write a request is all the hot path pays.
  const current = new WeakMap<Socket, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    current.set(req.socket, res);
  });
  server.on('connection', (socket: Socket) => {
    // The per-address cap (decision 0046) may have closed it already.
    if (socket.destroyed) return;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (open.size <= keep) return;
    server.closeIdleConnections();
    for (const other of open) {
      if (open.size <= keep) break;
      if (other === socket || other.destroyed) continue;
      const res = current.get(other);
      // Being answered: its request arrived whole and its response is not finished.
      if (res && res.req.complete && !res.writableFinished) continue;
      other.destroy();
      open.delete(other);
    }
  });
}
