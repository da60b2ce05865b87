import { clearFailures, countAttempt, forgetOldFailures } from '../../db/repos/portal-sign-in-failures.ts';
import { findUserForSignIn, setUserPassword } from '../../db/repos/users.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { audit } from '../actor.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import { hashPassword, needsRehash, verifyPassword } from './password.ts';
import { portalUserOf } from './roles.ts';
import { openSession, type PortalSession } from './session.ts';

/** A limit on failed attempts reached: 429, and when to try again. */
export interface LimitedResult {
  ok: false;
  status: 429;
  message: string;
  retryAfterSeconds: number;
}

export type SignInResult =
  | { ok: true; sessionId: string; session: PortalSession }
  | { ok: false; status: 401 | 403; message: string; retryAfterSeconds?: number }
  | LimitedResult;

/** The one answer to a wrong password and to an unknown email (decision 0039). */
export const WRONG_CREDENTIALS = 'That email and password do not match an account: check both and try again.';

/** The 429 of a limit reached, or undefined; `failures` newest first. */
export function limitReached(
  limits: Services['config']['portalSignIn'],
  recent: { address: Date[]; email: Date[] },
  now: number,
): LimitedResult | undefined {
  for (const [failures, limit, whose] of [
    [recent.address, limits.perAddress, 'this address'],
    [recent.email, limits.perEmail, 'this email from this address'],
  ] as const) {
    if (failures.length < limit) continue;
    // When the oldest failure that counts leaves the window, one attempt more is allowed.
    const seconds = Math.max(1, Math.ceil((failures[limit - 1]!.getTime() + limits.windowMs - now) / 1000));
    return {
      ok: false,
      status: 429,
      message: `Too many failed sign-ins for ${whose}: try again in ${Math.ceil(seconds / 60)} min.`,
      retryAfterSeconds: seconds,
    };
  }
  return undefined;
}

/**
 * A portal sign-in. Failures are counted per client address and per address and email, in the
 * database so that every instance counts them (decision 0039): past either limit every attempt from
 * the address (for that email) is refused with 429 before any password is checked, while the same
 * user still signs in from anywhere else. Each attempt is counted before its password is hashed, so
 * guesses sent at once are limited as guesses one by one (decision 0085). A wrong password and an
 * unknown email get the same 401 and take as long (a hash is computed either way, the unknown
 * email's against a dummy). All times are the real clock's.
 */
export async function signIn(
  svc: Services,
  input: { email: string; password: string; address: string },
): Promise<SignInResult> {
  const email = input.email.trim();
  const emailSha256 = tokenHash(email.toLowerCase());
  const limits = svc.config.portalSignIn;
  const now = Date.now();
  const since = new Date(now - limits.windowMs);
  const refused = await countAttempt(svc.db, {
    address: input.address,
    emailSha256,
    since,
    perAddress: limits.perAddress,
    perEmail: limits.perEmail,
    at: new Date(now),
  });
  if (refused) return limitReached(limits, refused, now)!;

  const user = email.length <= 254 ? await findUserForSignIn(svc.db, email) : undefined;
  if (!(await verifyPassword(input.password, user?.password_hash))) {
    // The attempt is already counted as a failure; only the old ones are forgotten here.
    await forgetOldFailures(svc.db, since);
    return { ok: false, status: 401, message: WRONG_CREDENTIALS };
  }
  // The password is right: saying why the account cannot sign in tells a guesser nothing.
  if (user!.partner_disabled) {
    return {
      ok: false,
      status: 403,
      message: 'Your partner account is disabled: ask the operator of the service.',
    };
  }
  if (user!.disabled_at) {
    return { ok: false, status: 403, message: 'Your user is disabled: ask an owner of your account.' };
  }
  const signedIn = portalUserOf(user!);
  if (needsRehash(user!.password_hash!)) {
    await setUserPassword(svc.db, signedIn.id, await hashPassword(svc, input.password));
  }
  await clearFailures(svc.db, input.address, emailSha256);
  const opened = await svc.db.transaction().execute(async (trx) => {
    const s = await openSession(svc, trx, signedIn);
    await audit(trx, portalActor(signedIn), {
      action: 'portal.sign_in',
      target: signedIn.partnerId,
      at: new Date(),
    });
    return s;
  });
  return { ok: true, ...opened };
}
