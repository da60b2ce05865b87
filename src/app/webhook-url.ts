import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { badRequest } from '../domain/errors.ts';

/**
 * Webhook URLs: anything http(s) in the sandbox; otherwise https only, and never an address that
 * resolves to a private, loopback or link-local network (the service must not be turned into a
 * probe of its own network).
 */
export function checkWebhookUrlSyntax(url: string, sandbox: boolean): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw badRequest('webhook_url must be an absolute URL');
  }
  if (u.protocol !== 'https:' && !(sandbox && u.protocol === 'http:')) {
    throw badRequest(sandbox ? 'webhook_url must be http:// or https://' : 'webhook_url must be https://');
  }
  if (
    !sandbox &&
    isIP(u.hostname.replace(/^\[|\]$/g, '')) &&
    isPrivateAddress(u.hostname.replace(/^\[|\]$/g, ''))
  ) {
    throw badRequest('webhook_url must not point at a private, loopback or link-local address');
  }
}

/** At delivery time, outside the sandbox: every address the host resolves to must be public. */
export async function assertPublicDestination(url: string, sandbox: boolean): Promise<void> {
  if (sandbox) return;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true });
  if (addresses.some((a) => isPrivateAddress(a.address))) {
    throw new Error(`webhook host ${host} resolves to a private, loopback or link-local address`);
  }
}

export function isPrivateAddress(ip: string): boolean {
  // IPv4-mapped IPv6: WHATWG URL writes [::ffff:127.0.0.1] as [::ffff:7f00:1], so the hex form
  // must be read back as the IPv4 address it carries.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (mapped) {
    const [hi, lo] = [Number.parseInt(mapped[1]!, 16), Number.parseInt(mapped[2]!, 16)];
    return isPrivateAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  if (ip.toLowerCase().startsWith('::ffff:')) return isPrivateAddress(ip.slice(7));
  if (isIP(ip) === 4) {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    return (
      a === 10 ||
      a === 127 ||
      a === 0 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224
    );
  }
  const v6 = ip.toLowerCase();
  return (
    v6 === '::1' ||
    v6 === '::' ||
    v6.startsWith('fe8') ||
    v6.startsWith('fe9') ||
    v6.startsWith('fea') ||
    v6.startsWith('feb') ||
    v6.startsWith('fc') ||
    v6.startsWith('fd') ||
    v6.startsWith('ff')
  );
}
