import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { Services } from '../services.ts';
import type { Derivation } from './password-worker.ts';

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

/**
 * Password hashing has a queue and threads of its own, at most one a CPU (decision 0085): on
 * libuv's threads (Node's async scrypt) a burst of sign-ins held the four threads that DNS lookups
 * of webhook deliveries and file reads share. Threads start at the first hash and end when idle.
 */
export const PASSWORD_THREADS = availableParallelism();
let pool: Piscina<Derivation, Uint8Array> | undefined;
let started = 0;

/** How many derivations this process has started, and the threads hashing now. */
export function passwordWork(): { started: number; threads: number } {
  return { started, threads: pool?.threads.length ?? 0 };
}

async function derive(
  password: string,
  salt: Buffer,
  o: { N: number; r: number; p: number },
): Promise<Buffer> {
  pool ??= new Piscina({
    filename: new URL(`./password-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url)
      .href,
    minThreads: 0,
    maxThreads: PASSWORD_THREADS,
    idleTimeout: 30_000,
  });
  started++;
  const key = await pool.run({ password, salt, N: o.N, r: o.r, p: o.p, keyBytes: KEY_BYTES });
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength);
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

type Judge = (
  password: string,
  userInputs: string[],
) => { score: number; warning: string; suggestions: string[] };
let judge: Promise<Judge> | undefined;
/**
 * zxcvbn with its common and English dictionaries (decision 0085), loaded at the first password set:
 * the dictionaries cost megabytes of heap that a process setting no password never needs.
 */
function zxcvbn(): Promise<Judge> {
  judge ??= (async () => {
    const [{ ZxcvbnFactory }, common, en] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
      import('@zxcvbn-ts/language-en'),
    ]);
    const factory = new ZxcvbnFactory({
      dictionary: { ...common.dictionary, ...en.dictionary },
      graphs: common.adjacencyGraphs,
      translations: en.translations,
    });
    return (password, userInputs) => {
      const r = factory.check(password, userInputs);
      return { score: r.score, warning: r.feedback.warning ?? '', suggestions: r.feedback.suggestions };
    };
  })();
  return judge;
}

/** zxcvbn's score a new password needs, of 0 to 4 ("safely unguessable" is 3). */
export const MIN_PASSWORD_SCORE = 3;
/** zxcvbn judges this much of a password: its time grows with the length, and more adds no doubt. */
const JUDGED_LENGTH = 100;

/**
 * Why a new password is refused, in words, or undefined when it is acceptable: its length, then the
 * common list, then zxcvbn's score (decision 0085). `userInputs` (the user's email, its parts)
 * count as guessed.
 */
export async function passwordProblem(
  password: string,
  userInputs: readonly string[] = [],
): Promise<string | undefined> {
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
  const inputs = userInputs.flatMap((u) => [u, ...u.split(/[@.+_-]/)]).filter((u) => u.length >= 3);
  const judged = (await zxcvbn())(password.slice(0, JUDGED_LENGTH), inputs);
  if (judged.score >= MIN_PASSWORD_SCORE) return undefined;
  const why = [judged.warning, ...judged.suggestions].filter(Boolean).join(' ');
  return `This password would be guessed too easily. ${why || 'A few unrelated words, or a longer phrase, make a strong one.'}`;
}
