import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { readOrCreateSecretFile } from '../../src/secrets/files.ts';
import { loadSecretKeys } from '../../src/secrets/keys.ts';
import { keyId, parseSealed, SecretBox, SecretKeyError, tokenHash } from '../../src/secrets/secret-box.ts';

const K1 = Buffer.alloc(32, 1);
const K2 = Buffer.alloc(32, 2);
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'polita-secret-box-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('SecretBox (AES-256-GCM)', () => {
  it('round-trips, with a fresh IV per value, the auth tag and the key id stored', () => {
    const box = new SecretBox(K1);
    const a = box.encrypt('the partner secret', 'ctx');
    const b = box.encrypt('the partner secret', 'ctx');
    expect(a).not.toBe(b);
    expect(a).not.toContain('the partner secret');
    const parts = parseSealed(a)!;
    expect(parts.keyId).toBe(keyId(K1));
    expect(parts.keyId).toMatch(/^[0-9a-f]{8}$/);
    expect(parts.iv).toHaveLength(12);
    expect(parts.tag).toHaveLength(16);
    expect(parts.iv.equals(parseSealed(b)!.iv)).toBe(false);
    expect(a.startsWith(`v1:${keyId(K1)}:`)).toBe(true);
    expect(box.decrypt(a, 'ctx')).toBe('the partner secret');
  });

  it('refuses a value that was altered or moved to another context', () => {
    const box = new SecretBox(K1);
    const sealed = box.encrypt('s3cret', 'polita/partner_secrets/a');
    expect(() => box.decrypt(sealed, 'polita/partner_secrets/b')).toThrow(SecretKeyError);
    const parts = sealed.split(':');
    const ct = Buffer.from(parts[4]!, 'base64url');
    ct[0]! ^= 1;
    parts[4] = ct.toString('base64url');
    expect(() => box.decrypt(parts.join(':'), 'polita/partner_secrets/a')).toThrow('fails authentication');
    expect(() => box.decrypt('s3cret', 'x')).toThrow('not in the v1 encrypted format');
  });

  it('chooses the key by its id: SECRET_KEY_PREVIOUS opens old values, an unknown key is named', () => {
    const old = new SecretBox(K1).encrypt('old', 'c');
    const rotated = new SecretBox(K2, K1);
    expect(rotated.decrypt(old, 'c')).toBe('old');
    expect(rotated.isStale(old)).toBe(true);
    expect(rotated.isStale(rotated.encrypt('new', 'c'))).toBe(false);
    expect(parseSealed(rotated.encrypt('new', 'c'))!.keyId).toBe(keyId(K2));
    expect(() => new SecretBox(K2).decrypt(old, 'c')).toThrow(
      `encrypted under key ${keyId(K1)}, and this process holds SECRET_KEY ${keyId(K2)} (no SECRET_KEY_PREVIOUS)`,
    );
  });

  it('hashes tokens with SHA-256 (hex)', () => {
    expect(tokenHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('SECRET_KEY and SECRET_KEY_PREVIOUS', () => {
  const hex = 'ab'.repeat(32);
  it('take 64 hex characters, and refuse anything else naming the variable', () => {
    expect(loadConfig({ SECRET_KEY: hex.toUpperCase() }).secretKey).toBe(hex);
    expect(loadConfig({ SECRET_KEY_PREVIOUS: hex }).secretKeyPrevious).toBe(hex);
    expect(loadConfig({}).secretKey).toBeUndefined();
    expect(() => loadConfig({ SECRET_KEY: 'ab'.repeat(16) })).toThrow(ConfigError);
    expect(() => loadConfig({ SECRET_KEY: 'ab'.repeat(16) })).toThrow(
      'SECRET_KEY must be 64 hex characters (a 32-byte key, e.g. from openssl rand -hex 32), got 32 characters',
    );
    expect(() => loadConfig({ SECRET_KEY_PREVIOUS: `${'zz'}${hex.slice(2)}` })).toThrow(
      'SECRET_KEY_PREVIOUS must be 64 hex characters (a 32-byte key, e.g. from openssl rand -hex 32), got 64 characters that are not all hex',
    );
  });

  it('SECRET_KEY is required when SANDBOX=false', () => {
    expect(() => loadConfig({ SANDBOX: 'false', ADMIN_TOKEN: 'x'.repeat(32) })).toThrow(
      'SECRET_KEY is required when SANDBOX=false',
    );
    expect(loadConfig({ SANDBOX: 'false', ADMIN_TOKEN: 'x'.repeat(32), SECRET_KEY: hex }).secretKey).toBe(
      hex,
    );
  });
});

describe('the sandbox key file', () => {
  it('is generated once into DATA_DIR/secret.key with mode 0600 and read afterwards', async () => {
    const dir = join(tempDir(), 'data');
    const config = { secretKey: undefined, secretKeyPrevious: undefined, sandbox: true, dataDir: dir };
    const first = await loadSecretKeys(config);
    expect(first.source).toBe('generated');
    expect(first.describe).toContain('(generated now)');
    expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    const again = await loadSecretKeys(config);
    expect(again.source).toBe('file');
    expect(again.box.keyId).toBe(first.box.keyId);
    expect(again.describe).toContain(join(dir, 'secret.key'));
    // SECRET_KEY wins over the file.
    const env = await loadSecretKeys({ ...config, secretKey: 'cd'.repeat(32) });
    expect(env.source).toBe('SECRET_KEY');
    expect(env.box.keyId).toBe(keyId(Buffer.from('cd'.repeat(32), 'hex')));
  });

  it('is created by exactly one of several starts racing for it; the others read the same key', async () => {
    const path = join(tempDir(), 'secret.key');
    let n = 0;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => readOrCreateSecretFile(path, () => `key-${n++}`)),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.value)).size).toBe(1);
  });

  it('refuses a damaged key file with the way out, rather than making a new key', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'secret.key'), 'not a key\n', { mode: 0o600 });
    const load = loadSecretKeys({
      secretKey: undefined,
      secretKeyPrevious: undefined,
      sandbox: true,
      dataDir: dir,
    });
    await expect(load).rejects.toThrow(SecretKeyError);
    await expect(load).rejects.toThrow(
      'does not hold a key of 64 hex characters: restore it from the backup',
    );
  });

  it('warns about a key file others can read', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'secret.key'), `${'ef'.repeat(32)}\n`, { mode: 0o644 });
    const keys = await loadSecretKeys({
      secretKey: undefined,
      secretKeyPrevious: undefined,
      sandbox: true,
      dataDir: dir,
    });
    expect(keys.warnings).toEqual([
      `${join(dir, 'secret.key')} can be read by other users of this machine: chmod 600 it`,
    ]);
  });
});

describe('the logger', () => {
  it('censors Authorization, X-Hmac-Signature and secret-bearing keys at any depth', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('info', sink);
    log.error(
      {
        req: {
          headers: {
            authorization: 'Bearer tok-A',
            'x-hmac-signature': 'demo:sig-B',
            'x-polita-signature': 'id=demo,t=1,v1=sig-I',
            host: 'h',
          },
        },
        partner: { id: 'demo', secrets: ['sec-C'] },
        err: Object.assign(new Error('boom'), {
          secret: 'sec-D',
          config: { headers: { authorization: 'tok-E' } },
        }),
        token: 'tok-F',
        adminToken: 'tok-G',
        nested: { deeper: { secret: 'sec-H' } },
      },
      'failure',
    );
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    for (const value of ['tok-A', 'sig-B', 'sec-C', 'sec-D', 'tok-E', 'tok-F', 'tok-G', 'sec-H', 'sig-I']) {
      expect(line).not.toContain(value);
    }
    const parsed = JSON.parse(line);
    expect(parsed.req.headers).toEqual({
      authorization: '[Redacted]',
      'x-hmac-signature': '[Redacted]',
      'x-polita-signature': '[Redacted]',
      host: 'h',
    });
    expect(parsed.partner).toEqual({ id: 'demo', secrets: '[Redacted]' });
    expect(parsed.err.message).toBe('boom');
  });
});
