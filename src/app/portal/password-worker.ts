import { scryptSync } from 'node:crypto';

/** What a password thread derives: scrypt's input and parameters. */
export interface Derivation {
  password: string;
  salt: Uint8Array;
  N: number;
  r: number;
  p: number;
  keyBytes: number;
}

/**
 * A password thread (decision 0085): one scrypt at a time, synchronously, on its own thread, so a
 * burst of hashes never takes libuv's threads from DNS lookups and file reads.
 */
export default function derive(d: Derivation): Uint8Array {
  // scrypt needs 128·N·r bytes (and a little more); Node refuses above maxmem.
  return scryptSync(d.password, d.salt, d.keyBytes, { N: d.N, r: d.r, p: d.p, maxmem: 256 * d.N * d.r });
}
