import type { Kysely, Transaction } from 'kysely';
import type { DB, PartnerRow } from '../schema.ts';

type Conn = Kysely<DB> | Transaction<DB>;

export interface PartnerWithSecrets extends PartnerRow {
  /** Active secrets, newest first. */
  secrets: string[];
  hasWallet: boolean;
}

export async function findPartner(db: Conn, id: string): Promise<PartnerWithSecrets | undefined> {
  const partner = await db.selectFrom('partners').selectAll().where('id', '=', id).executeTakeFirst();
  if (!partner) return undefined;
  const secrets = await db
    .selectFrom('partner_secrets')
    .select('secret')
    .where('partner_id', '=', id)
    .where('retired_at', 'is', null)
    .orderBy('id', 'desc')
    .execute();
  const wallet = await db
    .selectFrom('wallets')
    .select('partner_id')
    .where('partner_id', '=', id)
    .executeTakeFirst();
  return { ...partner, secrets: secrets.map((s) => s.secret), hasWallet: wallet !== undefined };
}

export async function insertPartner(
  trx: Transaction<DB>,
  p: {
    id: string;
    name: string;
    webhook_url: string | null;
    margin_bp?: number;
    rate_limit_per_minute?: number | null;
    secret: string;
    at: Date;
  },
): Promise<void> {
  await trx
    .insertInto('partners')
    .values({
      id: p.id,
      name: p.name,
      webhook_url: p.webhook_url,
      margin_bp: p.margin_bp ?? 0,
      rate_limit_per_minute: p.rate_limit_per_minute ?? null,
      created_at: p.at,
      updated_at: p.at,
    })
    .execute();
  await addSecret(trx, p.id, p.secret, p.at);
}

export async function addSecret(trx: Conn, partnerId: string, secret: string, at: Date): Promise<void> {
  await trx
    .insertInto('partner_secrets')
    .values({ partner_id: partnerId, secret, created_at: at, retired_at: null })
    .execute();
}

/** Retire every active secret but the newest; returns how many were retired. */
export async function retireOldSecrets(trx: Transaction<DB>, partnerId: string, at: Date): Promise<number> {
  const newest = await trx
    .selectFrom('partner_secrets')
    .select('id')
    .where('partner_id', '=', partnerId)
    .where('retired_at', 'is', null)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!newest) return 0;
  const res = await trx
    .updateTable('partner_secrets')
    .set({ retired_at: at })
    .where('partner_id', '=', partnerId)
    .where('retired_at', 'is', null)
    .where('id', '<>', newest.id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function updatePartner(
  db: Conn,
  id: string,
  patch: {
    name?: string;
    webhook_url?: string | null;
    disabled?: boolean;
    margin_bp?: number;
    rate_limit_per_minute?: number | null;
  },
  at: Date,
): Promise<boolean> {
  const res = await db
    .updateTable('partners')
    .set({ ...patch, updated_at: at })
    .where('id', '=', id)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}
