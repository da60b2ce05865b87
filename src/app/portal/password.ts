import { scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Services } from '../services.ts';

/**
 * Portal passwords (decision 0038): scrypt from Node's crypto, with a random 16-byte salt, stored
 * with its parameters as `scrypt$<N>$<r>$<p>$<salt>$<hash>` (base64url), compared in constant time.
 * N 2^14, r 8, p 5 is one of the settings OWASP's password storage cheat sheet gives as equivalent,
 * the one with the least memory (16 MiB a hash): the threads hashing at once must not take the
 * process past its memory budget (decision 0032).
 */
export const SCRYPT = { N: 2 ** 14, r: 8, p: 5 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 200;

function derive(password: string, salt: Buffer, o: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128·N·r bytes (and a little more); Node refuses above maxmem.
  const options: ScryptOptions = { ...o, maxmem: 256 * o.N * o.r };
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(svc: Pick<Services, 'randomBytes'>, password: string): Promise<string> {
  const salt = Buffer.from(svc.randomBytes(SALT_BYTES));
  const key = await derive(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

interface Stored {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

function parse(stored: string | null | undefined): Stored | undefined {
  const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([\w-]+)\$([\w-]+)$/.exec(stored ?? '');
  if (!m) return undefined;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Only sane parameters are worked on: a damaged row must not make a sign-in hash for minutes.
  if (N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return undefined;
  return { N, r, p, salt: Buffer.from(m[4]!, 'base64url'), key: Buffer.from(m[5]!, 'base64url') };
}

/** A stored hash of a password nobody knows, for the users that do not exist. */
const DUMMY: Stored = {
  ...SCRYPT,
  salt: Buffer.alloc(SALT_BYTES, 7),
  key: Buffer.alloc(KEY_BYTES),
};

/**
 * Whether `password` is the one `stored` was made from. Without a usable stored hash (an unknown
 * user, one who never set a password) a hash of the same cost is computed all the same, so the
 * answer takes as long either way and tells nothing about who exists.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const s = parse(stored);
  const target = s ?? DUMMY;
  const key = await derive(password, target.salt, target);
  return s !== undefined && key.length === s.key.length && timingSafeEqual(key, s.key);
}

/** True when a hash was made with other parameters than today's: it is made again at the next sign-in. */
export function needsRehash(stored: string): boolean {
  const s = parse(stored);
  return !s || s.N !== SCRYPT.N || s.r !== SCRYPT.r || s.p !== SCRYPT.p;
}

let common: Set<string> | undefined;
/** The 10 000 most common passwords (assets/common-passwords.txt), lowercased; read on first use. */
function commonPasswords(): Set<string> {
  common ??= new Set(
    readFileSync(new URL('../../../assets/common-passwords.txt', import.meta.url), 'utf8')
      .split('\n')
      .map((l) => l.trim().toLowerCase())
      .filter(Boolean),
  );
  return common;
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) {
    return `The password must be at least ${MIN_PASSWORD_LENGTH} characters long (this one has ${length}).`;
  }
  if (length > MAX_PASSWORD_LENGTH) {
    return `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`;
  }
  if (commonPasswords().has(password.toLowerCase())) {
    return 'This password is among the 10 000 most common ones, which are guessed first: choose another.';
  }
  return undefined;
}
