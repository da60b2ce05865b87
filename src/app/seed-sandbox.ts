import { rmSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { revokeInvitations } from '../db/repos/portal-invitations.ts';
import { disableUser } from '../db/repos/users.ts';
import { audit, SYSTEM_ACTOR } from './actor.ts';
import { endUserSessions } from './portal/session.ts';
import { findPartner } from '../db/repos/partners.ts';
import { findUserByEmail, insertUser, setUserPassword } from '../db/repos/users.ts';
import { deleteSetting, getSetting, putSetting } from '../db/repos/settings.ts';
import { lockSecrets } from '../secrets/at-rest.ts';
import { readOrCreateSecretFile, readSecretFileIfAny, replaceSecretFile } from '../secrets/files.ts';
import { SecretKeyError, tokenHash } from '../secrets/secret-box.ts';
import { creditWallet } from './admin/credit-wallet.ts';
import { changePartner, createPartner } from './admin/partners.ts';
import { hashPassword, verifyPassword } from './portal/password.ts';
import type { Services } from './services.ts';

export const DEMO_PARTNER_ID = 'demo';

/**
 * The sandbox's demo partner: made on first start with a wallet of 10 000 MDL online and 500 MDL
 * promo (credits by reference, so a restart never credits twice). Returns its id and newest secret.
 */
export async function ensureDemoPartner(svc: Services): Promise<{ id: string; secret: string }> {
  if (!(await findPartner(svc.db, DEMO_PARTNER_ID))) {
    try {
      await createPartner(svc, SYSTEM_ACTOR, { id: DEMO_PARTNER_ID, name: 'Demo Partner', wallet: true });
    } catch (err) {
      // Another instance on the same database made it first.
      if (!(await findPartner(svc.db, DEMO_PARTNER_ID))) throw err;
    }
  }
  await switchDemoSignatures(svc);
  const seed = { partnerId: DEMO_PARTNER_ID, actor: 'sandbox-seed' };
  await creditWallet(svc, SYSTEM_ACTOR, {
    ...seed,
    wallet: 'online',
    amountBani: 1_000_000,
    reference: 'sandbox-seed-online',
  });
  await creditWallet(svc, SYSTEM_ACTOR, {
    ...seed,
    wallet: 'promo',
    amountBani: 50_000,
    reference: 'sandbox-seed-promo',
  });
  const demo = await findPartner(svc.db, DEMO_PARTNER_ID);
  return { id: DEMO_PARTNER_ID, secret: demo!.secrets[0]! };
}

/** Set once the demo partner was given the signature default: later changes by hand then stand. */
const DEMO_SIGNATURES_SETTING = 'demo_partner_signatures_switched';

/**
 * The demo partner is made as every new partner, timestamped signatures required unless
 * DEFAULT_REQUIRE_TIMESTAMPED_SIGNATURE says otherwise; one made by an earlier version is switched
 * once, at the first start of this one (decision 0084).
 */
async function switchDemoSignatures(svc: Services): Promise<void> {
  if ((await getSetting<boolean>(svc.db, DEMO_SIGNATURES_SETTING)) !== undefined) return;
  const demo = await findPartner(svc.db, DEMO_PARTNER_ID);
  const wanted = svc.config.defaultRequireTimestampedSignature;
  if (demo && demo.require_timestamped_signature !== wanted) {
    await changePartner(svc, SYSTEM_ACTOR, DEMO_PARTNER_ID, { require_timestamped_signature: wanted });
  }
  await putSetting(svc.db, DEMO_SIGNATURES_SETTING, true, new Date());
}

export const DEMO_OWNER_EMAIL = 'owner@demo.example';
export const DEMO_OWNER_PASSWORD_FILE = 'demo-owner-password';

/**
 * The sandbox's demo owner: a portal user of the demo partner with the role owner, made on first
 * start. As the admin token, its password lives in clear only in `DATA_DIR/demo-owner-password`
 * (0600), so that it is printed at every start; the database holds its scrypt hash. When the file and
 * the hash disagree (the file was removed, or another instance's DATA_DIR made the user), the demo
 * owner gets the file's password: it is a demo account, and the printed password must work.
 * Undefined when the address belongs to a user of another partner.
 */
export async function ensureDemoOwner(
  svc: Services,
  dataDir: string,
): Promise<{ email: string; password: string } | undefined> {
  const make = () => Buffer.from(svc.randomBytes(18)).toString('base64url');
  const password = (await readOrCreateSecretFile(resolve(join(dataDir, DEMO_OWNER_PASSWORD_FILE)), make))
    .value;
  const email = DEMO_OWNER_EMAIL;
  let user = await findUserByEmail(svc.db, email);
  if (!user) {
    const at = new Date(await svc.clock.now());
    try {
      user = await insertUser(svc.db, {
        id: `usr_${Buffer.from(svc.randomBytes(8)).toString('hex')}`,
        partner_id: DEMO_PARTNER_ID,
        email,
        role: 'owner',
        created_at: at,
      });
    } catch (err) {
      // Another instance on the same database made it first.
      user = await findUserByEmail(svc.db, email);
      if (!user) throw err;
    }
  }
  if (user.partner_id !== DEMO_PARTNER_ID) return undefined;
  if (!(await verifyPassword(password, user.password_hash))) {
    await setUserPassword(svc.db, user.id, await hashPassword(svc, password));
  }
  return { email, password };
}

/** The setting holding the SHA-256 (hex) of the sandbox's generated admin token; never the token. */
export const ADMIN_TOKEN_HASH_SETTING = 'admin_token_sha256';
/** Where versions before secrets at rest kept the sandbox token in clear; converted at start. */
const CLEAR_ADMIN_TOKEN_SETTING = 'admin_token';
export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * The admin token: ADMIN_TOKEN (never stored, not even hashed), or in the sandbox a generated one.
 * The generated token lives in clear only in `DATA_DIR/admin-token` (0600), so that it is printed
 * at every start; the database holds only its SHA-256, which lets instances sharing a database
 * notice that they would answer different tokens. A token stored in clear by an earlier version is
 * moved to the file and replaced by its hash. Under the secrets lock: instances take turns.
 */
export async function ensureAdminToken(
  svc: Services,
  opts: { configured: string | undefined; dataDir: string; embedded: boolean },
): Promise<string> {
  const path = resolve(join(opts.dataDir, ADMIN_TOKEN_FILE));
  return svc.db.transaction().execute(async (trx) => {
    await lockSecrets(trx);
    const now = new Date();
    let stored = await getSetting<string>(trx, ADMIN_TOKEN_HASH_SETTING);
    const clear = await getSetting<unknown>(trx, CLEAR_ADMIN_TOKEN_SETTING);
    if (clear !== undefined) {
      if (typeof clear === 'string' && clear !== '') {
        // Keep printing the same token in the sandbox: it moves to the file unless one is there.
        const kept = svc.config.sandbox ? (await readOrCreateSecretFile(path, () => clear)).value : clear;
        if (!stored) await putSetting(trx, ADMIN_TOKEN_HASH_SETTING, (stored = tokenHash(kept)), now);
      }
      await deleteSetting(trx, CLEAR_ADMIN_TOKEN_SETTING);
    }
    if (opts.configured) return opts.configured;

    const fromFile = await readSecretFileIfAny(path);
    if (fromFile && (!stored || stored === tokenHash(fromFile))) {
      if (!stored) await putSetting(trx, ADMIN_TOKEN_HASH_SETTING, tokenHash(fromFile), now);
      return fromFile;
    }
    const make = () => Buffer.from(svc.randomBytes(24)).toString('hex');
    if (!stored) {
      const token = (await readOrCreateSecretFile(path, make)).value;
      await putSetting(trx, ADMIN_TOKEN_HASH_SETTING, tokenHash(token), now);
      return token;
    }
    // The database holds the hash of a token this DATA_DIR does not have.
    if (!opts.embedded) {
      throw new SecretKeyError(
        `the database holds the admin token of another instance (its DATA_DIR/admin-token), and ${path} ` +
          `${fromFile ? 'holds another' : 'does not exist'}: copy that file here, set ADMIN_TOKEN on every ` +
          `instance, or delete the setting ${ADMIN_TOKEN_HASH_SETTING} to have a new token generated`,
      );
    }
    // The embedded database lives in this DATA_DIR: the file was removed (or the database restored
    // from elsewhere), and a new token is the only one anyone can be told.
    const token = make();
    replaceSecretFile(path, token);
    await putSetting(trx, ADMIN_TOKEN_HASH_SETTING, tokenHash(token), now);
    svc.log.warn(`${path} was missing or did not match the database: a new admin token was generated`);
    return token;
  });
}

/** Where `npm start` writes the demo partner's credentials in the sandbox (src/main.ts). */
export const SANDBOX_CREDENTIALS_FILE = 'sandbox-credentials.json';

/**
 * A start outside the sandbox on data a sandbox made (decision 0086): the demo partner (an unfunded
 * wallet's balance, a secret that was printed and written in clear) and the demo owner are disabled,
 * `sandbox-credentials.json` is removed, and the log says so, once: a later start finds nothing left
 * to do. Nothing else changes. The demo partner is known by its id and the name the seed gives it.
 */
export async function retireSandboxData(svc: Services, dataDir: string): Promise<void> {
  const done: string[] = [];
  const demo = await findPartner(svc.db, DEMO_PARTNER_ID);
  if (demo && demo.name === 'Demo Partner' && !demo.disabled) {
    await changePartner(svc, SYSTEM_ACTOR, DEMO_PARTNER_ID, { disabled: true });
    done.push(`the demo partner ${DEMO_PARTNER_ID} was disabled`);
  }
  const owner = await findUserByEmail(svc.db, DEMO_OWNER_EMAIL, { partnerId: DEMO_PARTNER_ID });
  if (owner && !owner.disabled_at && demo?.name === 'Demo Partner') {
    const now = new Date();
    await svc.db.transaction().execute(async (trx) => {
      if (!(await disableUser(trx, DEMO_PARTNER_ID, owner.id, now))) return;
      await revokeInvitations(trx, owner.id, now);
      await endUserSessions(trx, owner.id);
      await audit(trx, SYSTEM_ACTOR, {
        action: 'partner.disable_user',
        target: DEMO_PARTNER_ID,
        before: { user_id: owner.id, email: owner.email, role: owner.role, disabled: false },
        after: { user_id: owner.id, email: owner.email, role: owner.role, disabled: true },
        at: now,
      });
    });
    done.push(`the demo owner ${DEMO_OWNER_EMAIL} was disabled`);
  }
  const credentials = resolve(join(dataDir, SANDBOX_CREDENTIALS_FILE));
  if (existsSync(credentials)) {
    rmSync(credentials, { force: true });
    done.push(`${credentials} was removed`);
  }
  if (done.length > 0) {
    svc.log.warn(`SANDBOX=false on data first used as a sandbox: ${done.join('; ')}`);
  }
}
