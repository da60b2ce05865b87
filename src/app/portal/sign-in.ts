import { clearFailures, recentFailures, recordFailure } from '../../db/repos/portal-sign-in-failures.ts';
import { findUserForSignIn, setUserPassword } from '../../db/repos/users.ts';
import { tokenHash } from '../../secrets/secret-box.ts';
import { audit } from '../admin/operators.ts';
import type { Services } from '../services.ts';
import { asUser } from './actor.ts';
import { hashPassword, needsRehash, verifyPassword } from './password.ts';
import { portalUserOf } from './roles.ts';
import { openSession, type PortalSession } from './session.ts';

export type SignInResult =
  | { ok: true; sessionId: string; session: PortalSession }
  | { ok: false; status: 401 | 403 | 429; message: string; retryAfterSeconds?: number };

/** The one answer to a wrong password and to an unknown email (decision 0039). */
export const WRONG_CREDENTIALS = 'That email and password do not match an account: check both and try again.';

/**
 * A portal sign-in. Failures are counted per client address and per address and email, in the
 * database so that every instance counts them (decision 0039): past either limit every attempt from
 * the address (for that email) is refused with 429 before any password is checked, while the same
 * user still signs in from anywhere else. A wrong password and an unknown email get the same 401 and
 * take as long (a hash is computed either way). All times are the real clock's.
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
  const recent = await recentFailures(svc.db, {
    address: input.address,
    emailSha256,
    since,
    perAddress: limits.perAddress,
    perEmail: limits.perEmail,
  });
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

  const user = email.length <= 254 ? await findUserForSignIn(svc.db, email) : undefined;
  if (!(await verifyPassword(input.password, user?.password_hash))) {
    await recordFailure(svc.db, { address: input.address, emailSha256, at: new Date(), before: since });
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
    await asUser(signedIn, () =>
      audit(trx, { action: 'portal.sign_in', target: signedIn.partnerId, at: new Date() }),
    );
    return s;
  });
  return { ok: true, ...opened };
}
