import type { Transaction } from 'kysely';
import { partnerSecretContext, type SecretBox } from '../../secrets/secret-box.ts';
import type { WebhookEventType } from '../../domain/order-state.ts';
import type { DB, PartnerRow, Db } from '../schema.ts';

export interface PartnerWithSecrets extends PartnerRow {
  /** Valid secrets, newest first, decrypted. */
  secrets: string[];
  /**
   * When one of these secrets stops being valid on its own (the previous secret, 24 h after a
   * rotation), by the real clock; null when none will (decision 0040).
   */
  secretsChangeAt: Date | null;
  hasWallet: boolean;
}

/**
 * How long the previous secret keeps working after a rotation (decision 0040). Its end is written in
 * its retired_at at the rotation: a secret is valid while retired_at is null or still ahead of the
 * real clock, never the sandbox clock, which an operator may move by days.
 */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/**
 * Partner secrets are stored encrypted (secret_enc, see src/secrets/secret-box.ts) and decrypted
 * here, when a partner is loaded: the partner directory caches the result, so a signed request
 * decrypts nothing. A handle's key ring is bound once by createServices, for callers that pass none.
 */
const boundBoxes = new WeakMap<object, SecretBox>();

export function bindSecretBox(db: Db, box: SecretBox): void {
  boundBoxes.set(db, box);
}

function boxFor(db: Db, box: SecretBox | undefined): SecretBox {
  const found = box ?? boundBoxes.get(db);
  if (!found)
    throw new Error('partner secrets: no key ring bound to this database handle (createServices binds it)');
  return found;
}

/** The clear secret of a row: its secret_enc decrypted, or a row from before encryption as it is. */
export function openSecretRow(
  box: SecretBox,
  row: { partner_id: string; secret: string | null; secret_enc: string | null },
): string {
  if (row.secret_enc !== null) return box.decrypt(row.secret_enc, partnerSecretContext(row.partner_id));
  // Only before the first start of this version has converted it (the command line may meet one).
  if (row.secret !== null) return row.secret;
  throw new Error('partner secret row holds neither a secret nor its encryption');
}

export async function partnerExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('partners').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

export async function findPartner(
  db: Db,
  id: string,
  box?: SecretBox,
  now: Date = new Date(),
): Promise<PartnerWithSecrets | undefined> {
  const partner = await db.selectFrom('partners').selectAll().where('id', '=', id).executeTakeFirst();
  if (!partner) return undefined;
  const secrets = await db
    .selectFrom('partner_secrets')
    .select(['partner_id', 'secret', 'secret_enc', 'retired_at'])
    .where('partner_id', '=', id)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now)]))
    .orderBy('id', 'desc')
    .execute();
  const ends = secrets.flatMap((s) => (s.retired_at ? [s.retired_at.getTime()] : []));
  const wallet = await db
    .selectFrom('wallets')
    .select('partner_id')
    .where('partner_id', '=', id)
    .executeTakeFirst();
  const ring = secrets.length > 0 ? boxFor(db, box) : undefined;
  return {
    ...partner,
    secrets: secrets.map((s) => openSecretRow(ring!, s)),
    secretsChangeAt: ends.length > 0 ? new Date(Math.min(...ends)) : null,
    hasWallet: wallet !== undefined,
  };
}

export async function insertPartner(
  trx: Transaction<DB>,
  p: {
    id: string;
    name: string;
    webhook_url: string | null;
    margin_bp?: number;
    rate_limit_per_minute?: number | null;
    require_timestamped_signature?: boolean;
    webhook_events?: WebhookEventType[];
    renewal_notice_days?: number;
    secret: string;
    at: Date;
  },
  box: SecretBox,
): Promise<void> {
  await trx
    .insertInto('partners')
    .values({
      id: p.id,
      name: p.name,
      webhook_url: p.webhook_url,
      margin_bp: p.margin_bp ?? 0,
      rate_limit_per_minute: p.rate_limit_per_minute ?? null,
      require_timestamped_signature: p.require_timestamped_signature ?? false,
      ...(p.webhook_events ? { webhook_events: p.webhook_events } : {}),
      ...(p.renewal_notice_days !== undefined ? { renewal_notice_days: p.renewal_notice_days } : {}),
      created_at: p.at,
      updated_at: p.at,
    })
    .execute();
  await addSecret(trx, p.id, p.secret, p.at, box);
}

/** A new secret is only ever written encrypted. */
export async function addSecret(
  trx: Db,
  partnerId: string,
  secret: string,
  at: Date,
  box: SecretBox,
): Promise<void> {
  await trx
    .insertInto('partner_secrets')
    .values({
      partner_id: partnerId,
      secret: null,
      secret_enc: box.encrypt(secret, partnerSecretContext(partnerId)),
      created_at: at,
      retired_at: null,
    })
    .execute();
}

/** Every secret row (retired ones too), locked for this transaction: for conversion and re-encryption. */
export async function lockAllSecretRows(trx: Transaction<DB>) {
  return trx
    .selectFrom('partner_secrets')
    .select(['id', 'partner_id', 'secret', 'secret_enc'])
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Rows still holding a clear secret (written before encryption), locked for this transaction. */
export async function lockClearSecretRows(trx: Transaction<DB>) {
  return trx
    .selectFrom('partner_secrets')
    .select(['id', 'partner_id', 'secret', 'secret_enc'])
    .where('secret', 'is not', null)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Every encrypted secret row, for the start-up check that this process holds their keys. */
export async function encryptedSecretRows(db: Db) {
  return db
    .selectFrom('partner_secrets')
    .select(['id', 'partner_id', 'secret', 'secret_enc'])
    .where('secret_enc', 'is not', null)
    .orderBy('id')
    .execute();
}

/** Stores a row's secret encrypted and drops its clear text, in one statement. */
export async function sealSecretRow(trx: Transaction<DB>, id: number, secretEnc: string): Promise<void> {
  await trx
    .updateTable('partner_secrets')
    .set({ secret: null, secret_enc: secretEnc })
    .where('id', '=', id)
    .execute();
}

/**
 * The partner's valid secrets (retired_at null or ahead of `now`), newest first, locked. The partner
 * row is locked first: two rotations of one partner take turns, and the second sees the first's new
 * secret.
 */
async function lockValidSecrets(trx: Transaction<DB>, partnerId: string, now: Date) {
  await trx.selectFrom('partners').select('id').where('id', '=', partnerId).forUpdate().execute();
  return trx
    .selectFrom('partner_secrets')
    .select(['id', 'retired_at'])
    .where('partner_id', '=', partnerId)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now)]))
    .orderBy('id', 'desc')
    .forUpdate()
    .execute();
}

/**
 * A rotation (decision 0040): every valid secret but the newest is retired now, the newest stays
 * valid until `now` + SECRET_OVERLAP_MS, and `secret` becomes the newest. `now` is the real clock.
 */
export async function rotateSecretRows(
  trx: Transaction<DB>,
  partnerId: string,
  secret: string,
  at: { created: Date; now: Date },
  box: SecretBox,
): Promise<void> {
  const [newest, ...older] = await lockValidSecrets(trx, partnerId, at.now);
  if (older.length > 0) {
    await trx
      .updateTable('partner_secrets')
      .set({ retired_at: at.now })
      .where(
        'id',
        'in',
        older.map((s) => s.id),
      )
      .execute();
  }
  if (newest) {
    await trx
      .updateTable('partner_secrets')
      .set({ retired_at: new Date(at.now.getTime() + SECRET_OVERLAP_MS) })
      .where('id', '=', newest.id)
      .execute();
  }
  await addSecret(trx, partnerId, secret, at.created, box);
}

/** Retires every valid secret but the newest, as of `now` (the real clock); returns how many. */
export async function retireOldSecrets(trx: Transaction<DB>, partnerId: string, now: Date): Promise<number> {
  const [, ...older] = await lockValidSecrets(trx, partnerId, now);
  if (older.length === 0) return 0;
  await trx
    .updateTable('partner_secrets')
    .set({ retired_at: now })
    .where(
      'id',
      'in',
      older.map((s) => s.id),
    )
    .execute();
  return older.length;
}

/** What the operator may change on a partner. */
export interface PartnerPatch {
  name?: string;
  webhook_url?: string | null;
  disabled?: boolean;
  margin_bp?: number;
  rate_limit_per_minute?: number | null;
  require_timestamped_signature?: boolean;
  webhook_events?: WebhookEventType[];
  renewal_notice_days?: number;
}

export async function updatePartner(db: Db, id: string, patch: PartnerPatch, at: Date): Promise<boolean> {
  const res = await db
    .updateTable('partners')
    .set({ ...patch, updated_at: at })
    .where('id', '=', id)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/**
 * Partners by id, a page at a time (keyset on id), with whether each has a wallet; `q` matches an
 * id exactly or as its start, or any part of the name (case-insensitive).
 */
export async function searchPartners(db: Db, f: { q?: string; afterId?: string; limit: number }) {
  let q = db
    .selectFrom('partners')
    .leftJoin('wallets', 'wallets.partner_id', 'partners.id')
    .selectAll('partners')
    .select((eb) => eb('wallets.partner_id', 'is not', null).as('has_wallet'));
  if (f.q) {
    const text = f.q.trim();
    const escaped = text.replace(/[\\%_]/g, (c) => `\\${c}`);
    q = q.where((eb) =>
      eb.or([
        eb('partners.id', 'like', `${escaped.toLowerCase()}%`),
        eb('partners.name', 'ilike', `%${escaped}%`),
      ]),
    );
  }
  if (f.afterId) q = q.where('partners.id', '>', f.afterId);
  return q.orderBy('partners.id').limit(f.limit).execute();
}
