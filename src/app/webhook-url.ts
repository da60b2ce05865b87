import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { badRequest } from '../domain/errors.ts';

/** 2000::/3, the IPv6 global unicast block; anything else ipaddr.js calls 'unicast' (::/96) is not. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * The one rule for webhook destinations (decision 0016): an address may be connected to
 * only if it is public unicast — ipaddr.js's reading of the IANA special-purpose registries says
 * 'unicast' (IPv4-mapped IPv6 is judged as the IPv4 address it carries) and, for IPv6, it lies in
 * 2000::/3. In the sandbox loopback (127.0.0.0/8, ::1) is allowed too, and nothing else.
 *
 * Returns null when allowed, else the name of the range the address is in (for the message).
 */
export function refusedAddressRange(address: string, sandbox: boolean): string | null {
  if (!ipaddr.isValid(address) || !isIP(address)) return 'not an IP address';
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (range === 'loopback' && sandbox) return null;
  if (range !== 'unicast') return range;
  if (ip.kind() === 'ipv6' && !ip.match(GLOBAL_UNICAST_V6)) return 'outside 2000::/3';
  return null;
}

export function isAllowedAddress(address: string, sandbox: boolean): boolean {
  return refusedAddressRange(address, sandbox) === null;
}

/** The host of a URL as a resolver or an IP check wants it: `[::1]` → `::1`. */
export function urlHost(u: URL): string {
  return u.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Webhook URLs as they are set: anything http(s) in the sandbox, otherwise https only; an IP literal
 * host must be allowed by the address rule above. Host names pass here and are checked at delivery,
 * on the address actually connected to (deliver-webhook.ts).
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
  // WHATWG URL has already normalised IPv4 spellings (2130706433, 0x7f.1) to dotted decimal.
  const host = urlHost(u);
  if (isIP(host)) {
    const range = refusedAddressRange(host, sandbox);
    if (range !== null) {
      throw badRequest(`webhook_url must point at a public address; ${host} is not (${range})`);
    }
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Where a delivery to `host` may connect: the host itself if it is an IP literal, else what
 * `resolve` answers (one resolution). Every address must pass the rule, or this throws
 * `webhook host <host> resolves to <address>, which is not a public address`.
 */
export async function checkedAddresses(
  host: string,
  sandbox: boolean,
  resolve: (host: string) => Promise<ResolvedAddress[]>,
): Promise<ResolvedAddress[]> {
  const family = isIP(host);
  const addresses = family ? [{ address: host, family }] : await resolve(host);
  if (addresses.length === 0) throw new Error(`webhook host ${host} resolves to no address`);
  for (const a of addresses) {
    if (!isAllowedAddress(a.address, sandbox)) {
      throw new Error(
        family
          ? `webhook host ${host} is not a public address`
          : `webhook host ${host} resolves to ${a.address}, which is not a public address`,
      );
    }
  }
  return addresses;
}
