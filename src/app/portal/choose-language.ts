import { badRequest } from '../../domain/errors.ts';
import { setUserLanguage } from '../../db/repos/users.ts';
import { audit } from '../actor.ts';
import type { Services } from '../services.ts';
import { portalActor } from './actor.ts';
import type { PortalUser } from './roles.ts';

const LANGUAGES = ['ro', 'ru', 'en'] as const;

/** Keeps the portal language a user chose (decision 0096), in the audit log under the user. */
export async function chooseLanguage(svc: Services, user: PortalUser, language: string): Promise<void> {
  const chosen = LANGUAGES.find((l) => l === language);
  if (!chosen) throw badRequest('The language must be ro, ru or en');
  await svc.db.transaction().execute(async (trx) => {
    await setUserLanguage(trx, user.id, chosen);
    await audit(trx, portalActor(user), {
      action: 'portal_user.language',
      target: user.id,
      before: user.language === null ? null : { language: user.language },
      after: { language: chosen },
      at: new Date(await svc.clock.now()),
    });
  });
}
