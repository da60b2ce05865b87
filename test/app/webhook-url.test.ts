import { describe, expect, it } from 'vitest';
import {
  assertPublicDestination,
  checkWebhookUrlSyntax,
  isPrivateAddress,
} from '../../src/app/webhook-url.ts';

const refused = (url: string, sandbox: boolean) => {
  try {
    checkWebhookUrlSyntax(url, sandbox);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

describe('webhook URLs outside the sandbox', () => {
  it('takes only https to a public host', () => {
    expect(refused('https://partner.example/hooks', false)).toBeNull();
    expect(refused('https://93.184.216.34/hooks', false)).toBeNull();
    expect(refused('http://partner.example/hooks', false)).toBe('webhook_url must be https://');
    expect(refused('not a url', false)).toBe('webhook_url must be an absolute URL');
  });

  it('refuses private, loopback and link-local addresses in any spelling', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://10.1.2.3/',
      'https://172.16.0.1/',
      'https://192.168.1.1/',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://2130706433/', // 127.0.0.1 as one number
      'https://0x7f.1/',
      'https://[::1]/',
      'https://[fe80::1]/',
      'https://[fd00::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:10.0.0.1]/',
    ]) {
      expect({ url, reason: refused(url, false) }).toEqual({
        url,
        reason: 'webhook_url must not point at a private, loopback or link-local address',
      });
    }
  });

  it('checks what a host name resolves to at delivery time', async () => {
    await expect(assertPublicDestination('https://localhost/hook', false)).rejects.toThrow(/private/);
    await expect(assertPublicDestination('https://[::ffff:7f00:1]/hook', false)).rejects.toThrow(/private/);
    await expect(assertPublicDestination('https://93.184.216.34/hook', false)).resolves.toBeUndefined();
  });
});

describe('webhook URLs in the sandbox', () => {
  it('also takes http and loopback, but nothing but http(s)', async () => {
    expect(refused('http://127.0.0.1:8080/hook', true)).toBeNull();
    expect(refused('https://[::1]/hook', true)).toBeNull();
    expect(refused('ftp://partner.example/', true)).toBe('webhook_url must be http:// or https://');
    await expect(assertPublicDestination('http://localhost/hook', true)).resolves.toBeUndefined();
  });
});

describe('isPrivateAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.0.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.0.1', true],
    ['169.254.1.1', true],
    ['224.0.0.1', true],
    ['8.8.8.8', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fc00::1', true],
    ['2001:4860:4860::8888', false],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:a00:1', true],
    ['::ffff:808:808', false],
  ])('%s → %s', (ip, expected) => {
    expect(isPrivateAddress(ip)).toBe(expected);
  });
});
