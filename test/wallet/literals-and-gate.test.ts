import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyedGate } from '../../src/app/wallet-gate.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { textLiteral } from '../../src/db/repos/wallets.ts';
import { testDatabaseUrl } from '../support/database.ts';

/**
 * The wallet booking travels with its COMMIT as one simple-query message, its values written in
 * as literals: whatever a value holds must come back from the database unchanged.
 */
describe('SQL text literals', () => {
  let url: Awaited<ReturnType<typeof testDatabaseUrl>>;
  let database: Database;

  beforeAll(async () => {
    url = await testDatabaseUrl();
    database = await openDatabase({ databaseUrl: url.url, dataDir: '' });
  });

  afterAll(async () => {
    await database?.close();
    await url?.drop();
  });

  it.each([
    ['plain', 'partner:p0123456789'],
    ['quotes', `O'Brien's "order"`],
    ['backslashes', "C:\\temp\\new \\' end\\"],
    ['an injection attempt', `x'); drop table wallets; --`],
    ['JSON', JSON.stringify({ transaction_id: "wallet:ABC'1", note: 'a\\b"c' })],
    ['diacritics and emoji', 'ă â î ș ț 🚗'],
  ])('round-trips %s', async (_, value) => {
    const { rows } = await sql.raw<{ v: string }>(`select ${textLiteral(value)} as v`).execute(database.db);
    expect(rows[0]!.v).toBe(value);
  });

  it('refuses a NUL character rather than cut the text', () => {
    expect(() => textLiteral('a\0b')).toThrow(/NUL/);
  });
});

describe('KeyedGate', () => {
  it('lets one holder per key through at a time, in arrival order, and other keys alongside', async () => {
    const gate = new KeyedGate();
    const log: string[] = [];
    const hold = async (key: string, name: string) => {
      const release = await gate.acquire(key);
      log.push(`${name}+`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`${name}-`);
      release();
    };
    await Promise.all([hold('a', 'a1'), hold('a', 'a2'), hold('b', 'b1'), hold('a', 'a3')]);
    const a = log.filter((x) => x.startsWith('a'));
    expect(a).toEqual(['a1+', 'a1-', 'a2+', 'a2-', 'a3+', 'a3-']);
    expect(log.indexOf('b1+')).toBeLessThan(log.indexOf('a1-'));
  });
});
