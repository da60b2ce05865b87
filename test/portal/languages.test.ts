import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUES, formatsFor, LANGUAGES, languageOf, translator } from '../../src/portal/i18n.ts';
import { ORDER_STATUSES, WEBHOOK_EVENT_TYPES } from '../../src/domain/order-state.ts';
import { known, REASON_KEYS, say } from '../../src/portal/reasons.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { csrfOf, FORM, form, portalUser } from './support.ts';

/**
 * The portal in Romanian, Russian and English (decision 0096): one catalogue per language with the
 * same messages, the language of Accept-Language before sign-in (Romanian when it names none of the
 * three), the user's own choice after, remembered; `<html lang>` says which; Intl's dates and money.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const page = (url: string, headers: Record<string, string> = {}) =>
  h.service.app.inject({ method: 'GET', url, headers });
const langOf = (html: string) => /<html lang="([a-z]+)">/.exec(html)?.[1];
/** A key without i18next's plural suffix: each language has the plural forms its grammar needs. */
const stem = (key: string) => key.replace(/_(zero|one|two|few|many|other)$/, '');

describe('the catalogues', () => {
  it('hold the same messages in ro, ru and en, none empty', () => {
    const keys = (l: (typeof LANGUAGES)[number]) => [...new Set(Object.keys(CATALOGUES[l]).map(stem))].sort();
    expect(keys('ru')).toEqual(keys('ro'));
    expect(keys('en')).toEqual(keys('ro'));
    for (const l of LANGUAGES) {
      for (const [k, v] of Object.entries(CATALOGUES[l])) expect(v.trim(), `${l}: ${k}`).not.toBe('');
    }
  });

  it('hold every refusal the portal translates', () => {
    const known = new Set(Object.keys(CATALOGUES.ro).map(stem));
    for (const key of REASON_KEYS) expect(known, key).toContain(key);
  });

  it('hold every key a portal template asks for', () => {
    const dir = new URL('../../src/portal/views/', import.meta.url);
    const known = new Set(Object.keys(CATALOGUES.ro).map(stem));
    for (const file of readdirSync(dir)) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      // Whole keys only: `t('nav.' + link.area)` is checked by the page tests.
      for (const m of text.matchAll(/\bt\('([^']+)'[,)]/g)) expect(known, `${file}: ${m[1]}`).toContain(m[1]);
    }
  });

  it('name every order status and webhook event a page shows as `status.<name>`', () => {
    const known = new Set(Object.keys(CATALOGUES.ro).map(stem));
    for (const name of [...ORDER_STATUSES, ...WEBHOOK_EVENT_TYPES])
      expect(known, name).toContain(`status.${name}`);
  });
});

describe('refusals', () => {
  /** One English reason of each kind a clerk may meet on a portal page (issue 48). */
  const ENGLISH = [
    'Unknown company_name Donaris',
    'Unknown insurance_company acme',
    'No tariff for insured amount 99999',
    'amount 99999 is not offered for Europa; offered: 10000, 30000',
    'availability must be one of 3, 6, 12 months',
    'role must be one of: owner, developer, cashier, accountant',
    'Order IAI123: The RO vignette price on this order is no longer valid (the vignette tariff system changed); create a new order',
    'payment.amount 100.00 MDL does not match the order price 120.00 MDL',
    'This order has no policy at that position',
    'cursor is not valid',
    'Unknown product lottery',
    'There is no product lottery',
    'The language must be ro, ru or en',
    'webhook_url must point at a public address; 10.0.0.1 is not (private)',
    'webhook_url must be https://',
    'The provider refused to issue the policy: the rca provider refused the vehicle (sandbox test vehicle).',
    'The insurer refused the cancellation: the rca insurer does not cancel policies of this vehicle',
    'body/receipt_id must NOT have more than 1000 characters',
    'customer/email must match format "email"',
    'Order is draft: only a completed, failed, refunded or expired order has an event to re-send',
    'expected 2xx, got 500',
    'Pentru vehicul categorie A nr.inmatriculare ACT009, exista rovinieta activa in perioada 27.08.2026 - 25.09.2026',
  ];

  it('are in the catalogue’s words in every language, none left in English', () => {
    for (const lang of LANGUAGES) {
      const t = translator(lang);
      for (const reason of ENGLISH) {
        const said = known(t, reason);
        expect(said, `${lang}: ${reason}`).toBeDefined();
        // A captured value shown through another catalogue key must find it, not show the key.
        expect(said, `${lang}: ${reason}`).not.toMatch(/\b(status|role|product|nav)\.\w/);
        if (lang !== 'en') expect(said, `${lang}: ${reason}`).not.toContain(reason);
      }
    }
  });

  it('say a few in Romanian and Russian as a clerk reads them', () => {
    const ro = translator('ro');
    const ru = translator('ru');
    expect(say(ro, 'Unknown company_name Donaris')).toBe(
      'nu este oferită pentru această vânzare: alegeți din nou o ofertă',
    );
    expect(say(ru, 'availability must be one of 3, 6, 12 months')).toBe(
      'должен быть одним из вариантов: 3, 6, 12 мес.',
    );
    expect(
      say(
        ro,
        'Order IAI123: The RO vignette price on this order is no longer valid (the vignette tariff system changed); create a new order',
      ),
    ).toMatch(/^Comanda IAI123: Tariful vinietelor s-a schimbat/);
    expect(say(ru, 'The provider refused to issue the policy: the rca provider refused the vehicle.')).toBe(
      'Поставщик отказался выпустить полис: поставщик отказал этому транспортному средству.',
    );
  });

  it('that the catalogue does not know come after a sentence in the page’s language', () => {
    expect(say(translator('ro'), 'Premature close')).toBe(
      'Portalul nu a putut face acest lucru. Cuvintele serviciului, în engleză: Premature close',
    );
  });

  it('of Fastify itself (a body it cannot read, one too large) are in the page’s language', async () => {
    const partner = await h.newPartner();
    const user = await portalUser(h, partner.id, 'cashier');
    const send = async (type: string, payload: string) =>
      h.service.app.inject({
        method: 'POST',
        url: '/portal/sell/offers',
        headers: {
          cookie: user.cookie,
          'content-type': type,
          'x-csrf-token': await csrfOf(h, user.cookie),
          'accept-language': 'ru',
        },
        payload,
      });
    const xml = await send('application/xml', '<product>rca</product>');
    expect(xml.statusCode).toBe(400);
    expect(xml.body).toContain('<html lang="ru">');
    expect(xml.body).toContain('Портал не смог прочитать эту форму: обновите страницу и отправьте её снова.');
    const large = await send(FORM['content-type'], `product=rca&f.vehicle=${'1'.repeat(70_000)}`);
    expect(large.statusCode).toBe(413);
    expect(large.body).toContain('Форма больше 64 КиБ.');
  });
});

describe('the language of a page', () => {
  it('follows Accept-Language before sign-in, and is Romanian when it names none of the three', async () => {
    const cases: [string | undefined, string, string][] = [
      [undefined, 'ro', 'Autentificare'],
      ['ru-RU,ru;q=0.9', 'ru', 'Вход'],
      ['en-GB', 'en', 'Sign in'],
      ['de-DE,fr;q=0.8', 'ro', 'Autentificare'],
      ['de, fr;q=0.9, en;q=0.8, ru;q=0.7', 'en', 'Sign in'],
      ['ru;q=0.5, ro;q=0.9', 'ro', 'Autentificare'],
    ];
    for (const [header, lang, words] of cases) {
      expect(languageOf(header), String(header)).toBe(lang);
      const res = await page('/portal/sign-in', header ? { 'accept-language': header } : {});
      expect(langOf(res.body), String(header)).toBe(lang);
      expect(res.body, String(header)).toContain(`<h1>${words}</h1>`);
    }
  });

  it('is the user’s choice once made, remembered whatever the browser says, and in the audit log', async () => {
    const partner = await h.newPartner();
    const user = await portalUser(h, partner.id, 'cashier');
    const asRussian = { cookie: user.cookie, 'accept-language': 'ru' };
    const before = await page('/portal/orders', asRussian);
    expect(langOf(before.body)).toBe('ru');
    expect(before.body).toContain('<label for="language">Язык</label>');

    const chosen = await h.service.app.inject({
      method: 'POST',
      url: '/portal/language',
      headers: { ...FORM, cookie: user.cookie },
      payload: form({ language: 'en', back: '/portal/orders', _csrf: await csrfOf(h, user.cookie) }),
    });
    expect(chosen.statusCode, chosen.body).toBe(303);
    expect(chosen.headers.location).toBe('/portal/orders?done=language-saved');
    const after = await page('/portal/orders?done=language-saved', asRussian);
    expect(langOf(after.body)).toBe('en');
    expect(after.body).toContain('The portal now speaks English to you.');

    const audit = await h.service.svc.db
      .selectFrom('audit_log')
      .select(['action', 'after'])
      .where('action', '=', 'portal_user.language')
      .where('target', '=', user.userId)
      .execute();
    expect(audit).toEqual([{ action: 'portal_user.language', after: { language: 'en' } }]);
  });

  it('refuses a language it does not have, and a way back off the portal', async () => {
    const partner = await h.newPartner();
    const user = await portalUser(h, partner.id, 'cashier');
    const send = async (fields: Record<string, string>) =>
      h.service.app.inject({
        method: 'POST',
        url: '/portal/language',
        headers: { ...FORM, cookie: user.cookie },
        payload: form({ ...fields, _csrf: await csrfOf(h, user.cookie) }),
      });
    const de = await send({ language: 'de', back: '/portal/orders' });
    expect(de.statusCode).toBe(400);
    // In the catalogue's words (the user's language is English), not the API's.
    expect(de.body).toContain('Choose Română, Русский or English.');
    const away = await send({ language: 'ro', back: 'https://evil.example/' });
    expect(away.headers.location).toBe('/portal?done=language-saved');
  });
});

describe('Intl formats', () => {
  it('write dates day first and money with the language’s separators', () => {
    expect(formatsFor('ro').date('2026-09-03')).toBe('03.09.2026');
    expect(formatsFor('ru').date('2026-09-03')).toBe('03.09.2026');
    expect(formatsFor('ro').mdl(1454.4).replace(/\s/g, ' ')).toBe('1.454,40 MDL');
    expect(formatsFor('ru').mdl(1454.4).replace(/\s/g, ' ')).toBe('1 454,40 MDL');
    expect(formatsFor('ro').when('2026-09-03T14:05:09+03:00')).toBe('03.09.2026, 14:05:09');
    expect(formatsFor('ru').country('DE')).toBe('Германия');
    expect(formatsFor('ro').country('DE')).toBe('Germania');
  });
});
