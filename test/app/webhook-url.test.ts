import { describe, expect, it } from 'vitest';
import {
  checkedAddresses,
  checkWebhookUrlSyntax,
  isAllowedAddress,
  refusedAddressRange,
} from '../../src/app/webhook-url.ts';
import { fakeResolver } from '../support/harness.ts';

const refused = (url: string, sandbox: boolean) => {
  try {
    checkWebhookUrlSyntax(url, sandbox);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

/** Not public unicast, whatever the mode: [address, the range ipaddr.js (or 2000::/3) puts it in]. */
const NEVER: [string, string][] = [
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['198.18.0.1', 'reserved'], // 198.18.0.0/15, benchmarking
  ['198.19.255.254', 'reserved'],
  ['192.0.0.8', 'reserved'], // 192.0.0.0/24, IETF protocol assignments
  ['192.0.2.1', 'reserved'], // documentation
  ['203.0.113.7', 'reserved'],
  ['::', 'unspecified'],
  ['fe80::1', 'linkLocal'],
  ['fc00::1', 'uniqueLocal'],
  ['fd00::1', 'uniqueLocal'],
  ['fec0::1', 'deprecatedSiteLocal'], // fec0::/10
  ['ff02::1', 'multicast'],
  ['64:ff9b::7f00:1', 'rfc6052'], // NAT64 64:ff9b::/96 carrying 127.0.0.1
  ['64:ff9b::a9fe:a9fe', 'rfc6052'], // … and 169.254.169.254
  ['2002:7f00:1::', '6to4'], // 6to4 2002::/16 carrying 127.0.0.1
  ['2002:a00:1::1', '6to4'],
  ['2001::1', 'teredo'],
  ['2001:db8::1', 'reserved'],
  ['100::1', 'discard'],
  ['::7f00:1', 'outside 2000::/3'], // IPv4-compatible ::127.0.0.1: ipaddr.js says 'unicast'
  ['::a00:1', 'outside 2000::/3'],
  ['::808:808', 'outside 2000::/3'],
  ['4000::1', 'outside 2000::/3'],
  ['::ffff:10.0.0.1', 'private'], // IPv4-mapped: judged as the IPv4 address
  ['::ffff:a9fe:a9fe', 'linkLocal'],
];
const LOOPBACK = ['127.0.0.1', '127.255.255.254', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1'];
const PUBLIC = [
  '8.8.8.8',
  '93.184.216.34',
  '172.32.0.1',
  '2001:4860:4860::8888',
  '2a00:1450:4001::1',
  '::ffff:808:808',
];

describe('the webhook address rule (one function, both modes)', () => {
  it.each(NEVER)('%s is refused as %s, in the sandbox too', (address, range) => {
    expect(refusedAddressRange(address, false)).toBe(range);
    expect(refusedAddressRange(address, true)).toBe(range);
    expect(isAllowedAddress(address, true)).toBe(false);
  });

  it.each(LOOPBACK)('loopback %s is allowed only in the sandbox', (address) => {
    expect(refusedAddressRange(address, false)).toBe('loopback');
    expect(isAllowedAddress(address, true)).toBe(true);
  });

  it.each(PUBLIC)('public unicast %s is allowed in both modes', (address) => {
    expect(isAllowedAddress(address, false)).toBe(true);
    expect(isAllowedAddress(address, true)).toBe(true);
  });

  it('takes nothing that is not an IP address', () => {
    expect(isAllowedAddress('localhost', true)).toBe(false);
    expect(isAllowedAddress('0x7f.1', true)).toBe(false);
    expect(isAllowedAddress('', true)).toBe(false);
  });
});

/** An address as a URL host: IPv6 in brackets. */
const asHost = (address: string) => (address.includes(':') ? `[${address}]` : address);

describe('webhook URLs outside the sandbox', () => {
  it('takes only https to a host name or a public address', () => {
    expect(refused('https://partner.example/hooks', false)).toBeNull();
    expect(refused('https://rebind.example/hooks', false)).toBeNull(); // checked at delivery
    expect(refused('https://localhost/hooks', false)).toBeNull(); // checked at delivery
    expect(refused('https://93.184.216.34/hooks', false)).toBeNull();
    expect(refused('https://[2001:4860:4860::8888]:8443/hooks', false)).toBeNull();
    expect(refused('http://partner.example/hooks', false)).toBe('webhook_url must be https://');
    expect(refused('http://93.184.216.34/hooks', false)).toBe('webhook_url must be https://');
    expect(refused('not a url', false)).toBe('webhook_url must be an absolute URL');
  });

  it('refuses an IP literal host that is not public unicast, naming it', () => {
    for (const [address, range] of [...NEVER, ...LOOPBACK.map((a) => [a, 'loopback'] as const)]) {
      const reason = refused(`https://${asHost(address)}/hook`, false);
      expect({ address, reason }).toEqual({
        address,
        reason: expect.stringMatching(/^webhook_url must point at a public address; \S+ is not \(.+\)$/),
      });
      expect(reason).toContain(`(${range})`);
    }
    expect(refused('https://169.254.169.254/latest/meta-data', false)).toBe(
      'webhook_url must point at a public address; 169.254.169.254 is not (linkLocal)',
    );
  });

  it('refuses the other spellings of loopback that URL parsing normalises', () => {
    for (const url of [
      'https://2130706433/', // 127.0.0.1 as one number
      'https://0x7f.1/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://[::ffff:127.0.0.1]/', // becomes [::ffff:7f00:1]
      'https://[0:0:0:0:0:0:0:1]/',
      'https://[::127.0.0.1]/', // IPv4-compatible, becomes [::7f00:1]
    ]) {
      expect({ url, reason: refused(url, false) }).toEqual({
        url,
        reason: expect.stringMatching(/^webhook_url must point at a public address/),
      });
    }
  });
});

describe('webhook URLs in the sandbox', () => {
  it('also takes http and loopback, but nothing but http(s)', () => {
    expect(refused('http://127.0.0.1:8080/hook', true)).toBeNull();
    expect(refused('http://127.0.0.2:8080/hook', true)).toBeNull();
    expect(refused('https://[::1]/hook', true)).toBeNull();
    expect(refused('http://[::ffff:127.0.0.1]/hook', true)).toBeNull();
    expect(refused('http://localhost:8080/hook', true)).toBeNull();
    expect(refused('http://partner.example/hook', true)).toBeNull();
    expect(refused('ftp://partner.example/', true)).toBe('webhook_url must be http:// or https://');
  });

  it('refuses every other address that is not public unicast (the metadata service first)', () => {
    expect(refused('http://169.254.169.254/latest/meta-data', true)).toBe(
      'webhook_url must point at a public address; 169.254.169.254 is not (linkLocal)',
    );
    for (const [address, range] of NEVER) {
      expect({ address, reason: refused(`http://${asHost(address)}/hook`, true) }).toEqual({
        address,
        reason: expect.stringContaining(`(${range})`),
      });
    }
    // IPv4-compatible ::127.0.0.1 is not loopback (ipaddr.js) and not global unicast: refused here too.
    expect(refused('http://[::7f00:1]/hook', true)).toBe(
      'webhook_url must point at a public address; ::7f00:1 is not (outside 2000::/3)',
    );
  });
});

describe('the addresses a delivery may connect to', () => {
  const resolve = fakeResolver({
    'rebind.example': ['10.0.0.5'],
    'partner.example': ['93.184.216.34', '2001:4860:4860::8888'],
    'mixed.example': ['93.184.216.34', '169.254.169.254'],
    'nat64.example': ['64:ff9b::a00:5'],
    localhost: ['127.0.0.1', '::1'],
  });

  it('answers every resolved address when all are allowed', async () => {
    await expect(checkedAddresses('partner.example', false, resolve)).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2001:4860:4860::8888', family: 6 },
    ]);
    await expect(checkedAddresses('localhost', true, resolve)).resolves.toHaveLength(2);
    await expect(checkedAddresses('93.184.216.34', false, resolve)).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
    ]);
  });

  it('refuses a name when any address it resolves to is not allowed, naming that address', async () => {
    await expect(checkedAddresses('rebind.example', true, resolve)).rejects.toThrow(
      'webhook host rebind.example resolves to 10.0.0.5, which is not a public address',
    );
    await expect(checkedAddresses('mixed.example', false, resolve)).rejects.toThrow(
      'webhook host mixed.example resolves to 169.254.169.254, which is not a public address',
    );
    await expect(checkedAddresses('nat64.example', false, resolve)).rejects.toThrow(
      'webhook host nat64.example resolves to 64:ff9b::a00:5, which is not a public address',
    );
    await expect(checkedAddresses('localhost', false, resolve)).rejects.toThrow(
      'webhook host localhost resolves to 127.0.0.1, which is not a public address',
    );
    await expect(checkedAddresses('::ffff:7f00:1', false, resolve)).rejects.toThrow(
      'webhook host ::ffff:7f00:1 is not a public address',
    );
    await expect(checkedAddresses('nowhere.example', false, resolve)).rejects.toThrow(/ENOTFOUND/);
  });
});
