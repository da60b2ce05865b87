import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUES, formatsFor, LANGUAGES, languageOf } from '../../src/portal/i18n.ts';
import { REASON_KEYS } from '../../src/portal/reasons.ts';
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
    expect((await send({ language: 'de', back: '/portal/orders' })).statusCode).toBe(400);
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
