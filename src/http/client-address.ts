import type { Server, Socket } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Whether an address is one of TRUST_PROXY's (addresses or CIDRs), parsed by ipaddr.js; an
 * IPv4-mapped IPv6 address (::ffff:192.0.2.1) is its IPv4 address. Given to Fastify as its
 * `trustProxy` function, so `request.ip` is the right-most X-Forwarded-For entry not in the list,
 * or the peer when the peer is not a trusted proxy (decision 0046).
 */
export function proxyMatcher(list: readonly string[]): (address: string) => boolean {
  const ranges = list.map((entry) =>
    ipaddr.isValidCIDR(entry) ? ipaddr.parseCIDR(entry) : cidrOf(ipaddr.process(entry)),
  );
  return (address) => {
    const ip = parsed(address);
    return ip !== undefined && ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  };
}

const cidrOf = (ip: ipaddr.IPv4 | ipaddr.IPv6): [ipaddr.IPv4 | ipaddr.IPv6, number] => [
  ip,
  ip.kind() === 'ipv4' ? 32 : 128,
];

function parsed(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    return ipaddr.process(address);
  } catch {
    return undefined;
  }
}

/** One form per address for counting (IPv4-mapped IPv6 as IPv4). */
const addressKey = (address: string) => parsed(address)?.toString() ?? address;

/**
 * MAX_CONNECTIONS_PER_IP: a new connection from a peer that already holds `max` open ones is closed
 * at once, so one address cannot take every connection the server allows; other addresses are
 * unaffected, and trusted proxies (which carry many clients) are not capped.
 */
export function capConnectionsPerAddress(server: Server, max: number, trusted: (address: string) => boolean) {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || trusted(address)) return;
    const key = addressKey(address);
    const count = open.get(key) ?? 0;
    if (count >= max) {
      socket.destroy();
      return;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
