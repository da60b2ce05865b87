import { badRequest, notFound } from '../../domain/errors.ts';
import {
  findPartner,
  insertPartner,
  partnerExists,
  retireOldSecrets as retireOldSecretsRepo,
  rotateSecretRows,
  updatePartner,
  type PartnerPatch,
} from '../../db/repos/partners.ts';
import { createWallet } from '../../db/repos/wallets.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/order-state.ts';
import type { Services } from '../services.ts';
import { checkWebhookUrlSyntax } from '../webhook-url.ts';
import { audit, type Actor } from '../actor.ts';

/** Renewal notices (expiring events) this many days before a policy's last day (decision 0092). */
export const DEFAULT_RENEWAL_NOTICE_DAYS = 30;

/** Operator use cases on partners. The secret is shown once, when it is made. */
const hex = (svc: Services, n: number) => Buffer.from(svc.randomBytes(n)).toString('hex');

export function partnerView(
  p: {
    id: string;
    name: string;
    webhook_url: string | null;
    disabled: boolean;
    margin_bp: number;
    rate_limit_per_minute: number | null;
    require_timestamped_signature: boolean;
    webhook_events: WebhookEventType[];
    renewal_notice_days: number;
  },
  wallet: boolean,
  defaultRateLimit: number,
) {
  return {
    id: p.id,
    name: p.name,
    webhook_url: p.webhook_url,
    webhook_events: p.webhook_events,
    renewal_notice_days: p.renewal_notice_days,
    wallet,
    disabled: p.disabled,
    margin_bp: p.margin_bp,
    // The limit in force: the partner's own, or the service's RATE_LIMIT_PER_MINUTE.
    rate_limit_per_minute: p.rate_limit_per_minute ?? defaultRateLimit,
    require_timestamped_signature: p.require_timestamped_signature,
  };
}

export async function createPartner(
  svc: Services,
  actor: Actor,
  input: {
    id?: string;
    name: string;
    webhook_url?: string | null;
    wallet?: boolean;
    margin_bp?: number;
    rate_limit_per_minute?: number | null;
    require_timestamped_signature?: boolean;
    webhook_events?: WebhookEventType[];
    renewal_notice_days?: number;
  },
) {
  if (input.webhook_url) checkWebhookUrlSyntax(input.webhook_url, svc.config.sandbox);
  if (input.renewal_notice_days !== undefined) checkRenewalNoticeDays(input.renewal_notice_days);
  const webhookEvents = checkWebhookEvents(input.webhook_events ?? ['completed']);
  const id = input.id ?? `p${hex(svc, 5)}`;
  const secret = hex(svc, 32);
  const at = new Date(await svc.clock.now());
  const wallet = input.wallet ?? true;
  // What the answer and the audit log show (the secret is only in the answer).
  const created = {
    name: input.name,
    webhook_url: input.webhook_url ?? null,
    webhook_events: webhookEvents,
    renewal_notice_days: input.renewal_notice_days ?? DEFAULT_RENEWAL_NOTICE_DAYS,
    wallet,
    // Timestamped by default (decision 0084): a captured request must not replay for ever.
    require_timestamped_signature:
      input.require_timestamped_signature ?? svc.config.defaultRequireTimestampedSignature,
  };
  await svc.db.transaction().execute(async (trx) => {
    if (await partnerExists(trx, id)) throw badRequest(`Partner ${id} already exists`);
    await insertPartner(
      trx,
      {
        id,
        name: input.name,
        webhook_url: input.webhook_url ?? null,
        margin_bp: input.margin_bp ?? 0,
        rate_limit_per_minute: input.rate_limit_per_minute ?? null,
        require_timestamped_signature: created.require_timestamped_signature,
        webhook_events: webhookEvents,
        renewal_notice_days: created.renewal_notice_days,
        secret,
        at,
      },
      svc.partners.box,
    );
    if (wallet) await createWallet(trx, id, at);
    await audit(trx, actor, { action: 'partner.create', target: id, after: created, at });
  });
  return { id, secret, ...created };
}

export async function getPartner(svc: Services, id: string) {
  const p = await findPartner(svc.db, id, svc.partners.box);
  if (!p) throw notFound('Partner not found');
  return {
    ...partnerView(p, p.hasWallet, svc.config.rateLimitPerMinute),
    active_secrets: p.secrets.length,
  };
}

export async function changePartner(svc: Services, actor: Actor, id: string, patch: PartnerPatch) {
  if (patch.webhook_url) checkWebhookUrlSyntax(patch.webhook_url, svc.config.sandbox);
  if (patch.renewal_notice_days !== undefined) checkRenewalNoticeDays(patch.renewal_notice_days);
  const before = await getPartner(svc, id);
  const at = new Date(await svc.clock.now());
  await svc.db.transaction().execute(async (trx) => {
    const ok = await updatePartner(
      trx,
      id,
      patch.webhook_events ? { ...patch, webhook_events: checkWebhookEvents(patch.webhook_events) } : patch,
      at,
    );
    if (!ok) throw notFound('Partner not found');
    const changed = Object.keys(patch) as (keyof typeof before)[];
    await audit(trx, actor, {
      action: 'partner.change',
      target: id,
      before: Object.fromEntries(changed.map((k) => [k, before[k]])),
      after: patch,
      at,
    });
  });
  svc.partners.invalidate(id);
  return getPartner(svc, id);
}

/**
 * The statuses whose events a partner's webhook receives, in the state machine's order. The
 * contract sends every partner with a webhook URL the completion webhook
 * (docs/api-reference.md#webhooks): a list without it is refused rather than quietly completed.
 */
function checkRenewalNoticeDays(days: number): void {
  if (!Number.isInteger(days) || days < 0 || days > 365) {
    throw badRequest('renewal_notice_days must be a whole number of days from 0 (no notice) to 365');
  }
}

function checkWebhookEvents(list: readonly WebhookEventType[]): WebhookEventType[] {
  if (!list.includes('completed')) {
    throw badRequest(
      'webhook_events must include "completed": the completion webhook is always sent; add "failed", "refunded", "expired", "corrected" or "expiring" to receive those too',
    );
  }
  return WEBHOOK_EVENT_TYPES.filter((s) => list.includes(s));
}

/**
 * A new secret. The previous one keeps working until retireOldSecrets or 24 h after this, whichever
 * comes first, so partners can roll over without downtime; a rotation while two secrets are valid
 * retires the older one first (decision 0040). The console, /admin, the command line and the portal
 * all rotate here.
 */
export async function rotateSecret(svc: Services, actor: Actor, id: string) {
  const secret = hex(svc, 32);
  // The clock is read before the transaction, which then holds its connection only for the writes.
  const at = new Date(await svc.clock.now());
  // The overlap is judged by the real clock: moving the sandbox clock must not end or extend it.
  const now = new Date();
  await svc.db.transaction().execute(async (trx) => {
    if (!(await partnerExists(trx, id))) throw notFound('Partner not found');
    await rotateSecretRows(trx, id, secret, { created: at, now }, svc.partners.box);
    // Never the secret itself: that a new one was made, and when.
    await audit(trx, actor, { action: 'partner.rotate_secret', target: id, at });
  });
  svc.partners.invalidate(id);
  return { secret };
}

/** Retires every valid secret but the newest, now (the real clock, as the overlap it ends). */
export async function retireOldSecrets(svc: Services, actor: Actor, id: string) {
  const at = new Date(await svc.clock.now()); // before the transaction, as in rotateSecret
  const retired = await svc.db.transaction().execute(async (trx) => {
    if (!(await partnerExists(trx, id))) throw notFound('Partner not found');
    const n = await retireOldSecretsRepo(trx, id, new Date());
    await audit(trx, actor, { action: 'partner.retire_old_secrets', target: id, after: { retired: n }, at });
    return n;
  });
  svc.partners.invalidate(id);
  return { retired };
}
