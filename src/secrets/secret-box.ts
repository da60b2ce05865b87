import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (decision 0021): AES-256-GCM under SECRET_KEY, with
 * SECRET_KEY_PREVIOUS also tried while a rotation is under way.
 *
 * A stored value is `v1:<key id>:<iv>:<tag>:<ciphertext>` (base64url parts): a random 12-byte IV
 * per value, GCM's 16-byte authentication tag, and the key id (the first 8 hex of SHA-256 of the
 * key) so that the right key is chosen and a value under a key this process lacks is named, not
 * guessed at. The caller's context (for a partner secret, its partner id) is authenticated as
 * additional data: a ciphertext copied to another partner's row does not decrypt.
 */
export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

/** The first 8 hex of SHA-256 of the key: names a key in stored values and messages, reveals nothing usable. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** Parses a SECRET_KEY-style value: 64 hex characters (32 bytes). Undefined when malformed. */
export function parseKeyHex(text: string): Buffer | undefined {
  const t = text.trim();
  return /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : undefined;
}

export function newKeyHex(): string {
  return randomBytes(KEY_BYTES).toString('hex');
}

export interface SealedParts {
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

/** The parts of a stored value, or undefined when it is not one. */
export function parseSealed(stored: string): SealedParts | undefined {
  const parts = stored.split(':');
  if (parts.length !== 5 || parts[0] !== FORMAT || !/^[0-9a-f]{8}$/.test(parts[1]!)) return undefined;
  const [iv, tag, ciphertext] = parts.slice(2).map((p) => Buffer.from(p, 'base64url'));
  if (iv!.length !== IV_BYTES || tag!.length !== TAG_BYTES) return undefined;
  return { keyId: parts[1]!, iv: iv!, tag: tag!, ciphertext: ciphertext! };
}

export class SecretBox {
  private readonly current: { id: string; key: Buffer };
  private readonly keys = new Map<string, Buffer>();

  /** `previous`: SECRET_KEY_PREVIOUS, tried for values that name its key id (rotation). */
  constructor(current: Buffer, previous?: Buffer) {
    for (const k of [current, previous]) {
      if (k && k.length !== KEY_BYTES) throw new SecretKeyError(`a secret key must be ${KEY_BYTES} bytes`);
    }
    this.current = { id: keyId(current), key: current };
    this.keys.set(this.current.id, current);
    if (previous) this.keys.set(keyId(previous), previous);
  }

  /** The id of SECRET_KEY: what every value is (re-)encrypted under. */
  get keyId(): string {
    return this.current.id;
  }

  /** Ids of every key this box can decrypt with (SECRET_KEY first). */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  encrypt(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [FORMAT, this.current.id, iv, tag, ciphertext]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join(':');
  }

  /** The clear value; throws SecretKeyError when no key of this box fits or the value was altered. */
  decrypt(stored: string, context: string): string {
    const sealed = parseSealed(stored);
    if (!sealed) throw new SecretKeyError('a stored secret is not in the v1 encrypted format');
    const key = this.keys.get(sealed.keyId);
    if (!key) {
      throw new SecretKeyError(
        `a stored secret is encrypted under key ${sealed.keyId}, and this process holds ${this.describeKeys()}`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(sealed.tag);
      return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(
        `a stored secret under key ${sealed.keyId} fails authentication: it was altered, or moved from another row`,
      );
    }
  }

  /** True when the value is not under SECRET_KEY (so re-encrypt would rewrite it). */
  isStale(stored: string): boolean {
    return parseSealed(stored)?.keyId !== this.current.id;
  }

  describeKeys(): string {
    const [current, previous] = this.keyIds;
    return `SECRET_KEY ${current}${previous ? ` and SECRET_KEY_PREVIOUS ${previous}` : ' (no SECRET_KEY_PREVIOUS)'}`;
  }
}

/** The authenticated context of a partner secret: binds the ciphertext to its partner. */
export const partnerSecretContext = (partnerId: string) => `polita/partner_secrets/${partnerId}`;

/**
 * Operator tokens are stored only as this hash. SHA-256 without salt or stretching is enough here:
 * a stored token is the sandbox's 48 random hex characters (192 bits), which no dictionary or
 * brute force reaches; ADMIN_TOKEN from the environment is never stored at all.
 */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
