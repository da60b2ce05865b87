import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type, type TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyRequest } from 'fastify';
import { productChoices, sellModule } from '../../app/portal/sell.ts';
import type { Services } from '../../app/services.ts';
import { badRequest } from '../../domain/errors.ts';
import { normalPhone } from '../../domain/phone.ts';
import { schemaErrorMessage } from '../../http/schema-errors.ts';
import { COUNTRY_CHOICES } from '../../products/countries.ts';
import type { Choice } from '../../products/types.ts';
import { DEFAULT_LANGUAGE, formatsFor, translator, type T } from '../i18n.ts';
import { deskWords, type DeskWords } from '../labels.ts';
import { fieldId, fieldOfReason, pathOf, type Choices, type Field } from '../schema-form.ts';
import { say } from '../reasons.ts';

/**
 * What the steps of the sales desk share (docs/decisions/0060-sales-desk-forms-from-schemas.md,
 * 0097-sales-desk-errors-and-state.md): the form body, the page's words, the lists a form picks
 * from, every error of a form at once in the clerk's language, and the sale's state between steps
 * as a signed token.
 */

/** A form's fields: strings, or several values of one name; at most a few hundred. */
export const FormBody = Type.Record(
  Type.String({ maxLength: 200 }),
  Type.Union([
    Type.String({ maxLength: 20_000 }),
    Type.Array(Type.String({ maxLength: 2_000 }), { maxItems: 100 }),
  ]),
  { maxProperties: 400 },
);
export type Body = Partial<Record<string, string | string[]>>;
export const one = (v: string | string[] | undefined): string =>
  Array.isArray(v) ? (v[0] ?? '') : (v ?? '');

/** The words, formats and lists of the desk in the request's language, for a product. */
export interface Desk {
  t: T;
  words: DeskWords;
  choices: Choices;
  /** A territory as an answer names it (medical's `region`, the catalogue's label), in words. */
  territory(text: string): string;
}

export function deskOf(svc: Services, req: FastifyRequest, product?: string): Desk {
  const lang = req.portalLanguage ?? DEFAULT_LANGUAGE;
  const t = translator(lang);
  const f = formatsFor(lang);
  const words = deskWords(t, f);
  const insurers = svc.catalogue.common.insurers.map((i) => ({ value: i.code, label: i.name }));
  const collator = new Intl.Collator(lang);
  const byName = (a: Choice, b: Choice) => collator.compare(a.label, b.label);
  const countries = (list: readonly Choice[]) =>
    list.map((c) => ({ value: c.value, label: words.place(c.value) })).sort(byName);
  const own = product ? productChoices(svc, product) : {};
  const choices: Choices = (path) => {
    const listed = own[path];
    if (path === 'covered_territories' && listed) {
      // The catalogue's regions first, then every country by its name in the page's language.
      const regions = listed.filter((c) => words.t(`territory.${c.value}`) !== `territory.${c.value}`);
      const rest = listed.filter((c) => !regions.includes(c));
      return [...regions.map((c) => ({ value: c.value, label: words.place(c.value) })), ...countries(rest)];
    }
    if (listed) return /(^|\.)country$/.test(path) ? countries(listed) : listed;
    if (/(^|\.)(insurance_company|company_name)$/.test(path)) return insurers;
    // A foreign vehicle's registration country is any but Moldova (a Moldovan car has a certificate).
    if (/(^|\.)registration_country$/.test(path))
      return countries(COUNTRY_CHOICES.filter((c) => c.value !== 'MD'));
    if (/(^|\.)(country|residence_country)$/.test(path)) return countries(COUNTRY_CHOICES);
    return undefined;
  };
  const territory = (text: string) =>
    words.place(own.covered_territories?.find((c) => c.label === text || c.value === text)?.value ?? text);
  return { t, words, choices, territory };
}

/** The product's name in the page's language. */
export const productName = (t: T, product: string) => t(`product.${product}`);

// Every error of a form at once: Ajv with allErrors, the same keywords and formats as the API's.
const ajv = new Ajv({ allErrors: true, coerceTypes: false, strict: false, discriminator: true });
addFormats.default(ajv);
const compiled = new WeakMap<TSchema, ReturnType<typeof ajv.compile>>();
const compile = (schema: TSchema) => {
  let check = compiled.get(schema);
  if (!check) {
    check = ajv.compile(schema as object);
    compiled.set(schema, check);
  }
  return check;
};

/** A form's errors by field key, in the clerk's words, each naming its field by its label. */
export type Errors = Map<string, string>;

/** Where an error of Ajv's is, as a form field's key (`persons.0.birthday`). */
const keyOf = (e: ErrorObject) => {
  const at = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const missing = e.keyword === 'required' ? String(e.params.missingProperty) : '';
  return [at, missing].filter(Boolean).join('.');
};

/**
 * The errors of `data` against `schema`, one per field (the first), for the fields the form shows
 * (`keys`): a field the form does not show is left to the API to name.
 */
export function formErrors(desk: Desk, schema: TSchema, data: unknown, fields: readonly Field[]): Errors {
  const check = compile(schema);
  const errors: Errors = new Map();
  if (check(data)) return errors;
  const shown = new Map(flatFields(fields).map((f) => [f.key, f]));
  for (const e of check.errors ?? []) {
    if (['if', 'allOf', 'anyOf', 'oneOf', 'discriminator'].includes(e.keyword)) {
      // A union of constants: its own errors are `const`; the union's says it once.
      if (e.keyword !== 'anyOf') continue;
    }
    const key = keyOf(e);
    const field = shown.get(key);
    if (!field || errors.has(key)) continue;
    errors.set(key, messageOf(desk.t, e, field));
  }
  // In the order of the form, as the clerk reads it.
  const order = [...shown.keys()];
  return new Map([...errors].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b)));
}

/** The error summary of a form: each message, linking to its field (the GOV.UK pattern). */
export const summaryOf = (errors: Errors | undefined): { href: string; message: string }[] =>
  [...(errors ?? [])].map(([key, message]) => ({
    href: key.startsWith('customer.') ? `#c-${key.slice('customer.'.length)}` : `#${fieldId(key)}`,
    message,
  }));

/** The API's own words for the first thing its schema refuses in `data`, or undefined. */
export function apiRefusal(schema: TSchema, data: unknown): string | undefined {
  const check = compile(schema);
  if (check(data)) return undefined;
  return schemaErrorMessage(check.errors ?? [], 'body').replace(/^body\/(products\/0\/)?/, '');
}

export const flatFields = (fs: readonly Field[]): Field[] =>
  fs.flatMap((f) => [f, ...flatFields(f.children ?? [])]);

function messageOf(t: T, e: ErrorObject, field: Field): string {
  const label = field.label;
  const chooses = field.kind === 'select' || field.kind === 'multi';
  switch (e.keyword) {
    case 'required':
      return t(chooses ? 'error.choose' : 'error.required', { label });
    case 'format':
      return t(e.params.format === 'date' ? 'error.date' : 'error.invalid', { label });
    case 'minimum':
    case 'exclusiveMinimum':
      return t('error.minimum', { label, limit: String(e.params.limit) });
    case 'maximum':
    case 'exclusiveMaximum':
      return t('error.maximum', { label, limit: String(e.params.limit) });
    case 'maxLength':
      return t('error.maxLength', { label, limit: String(e.params.limit) });
    case 'minLength':
      return t('error.required', { label });
    case 'minItems':
      return t(chooses ? 'error.choose' : 'error.required', { label });
    case 'type':
      return t(field.kind === 'number' ? 'error.number' : 'error.invalid', { label });
    case 'enum':
    case 'const':
    case 'anyOf':
      return t('error.choose', { label });
    default:
      return t('error.invalid', { label });
  }
}

/**
 * The refusals of a use case (the API's English reasons, every one the product's rules gave:
 * `checkAll`) as the form's errors: each beside the field it names (the first for a field), the
 * others above the form, in the clerk's language.
 */
export function refusalErrors(
  desk: Desk,
  reasons: readonly string[],
  fields: readonly Field[],
  extra: readonly string[] = [],
): { errors: Errors; error?: string } {
  const flat = flatFields(fields);
  const keys = [...flat.map((f) => f.key), ...extra];
  const errors: Errors = new Map();
  const above: string[] = [];
  for (const reason of reasons) {
    const key = fieldOfReason(reason, keys);
    const message = say(desk.t, reason);
    if (!key) {
      if (!above.includes(message)) above.push(message);
      continue;
    }
    if (errors.has(key)) continue;
    const label = flat.find((f) => f.key === key)?.label ?? desk.t(`field.${pathOf(key)}`);
    errors.set(key, desk.t('error.named', { label, message }));
  }
  // In the order of the form, as the clerk reads it.
  const sorted = new Map([...errors].sort(([a], [b]) => keys.indexOf(a) - keys.indexOf(b)));
  return { errors: sorted, ...(above.length ? { error: above.join(' ') } : {}) };
}

/**
 * The form's own errors with the product rules' refusals beside them (decision 0098), so a form its
 * own checks refuse names the rules' refusals too, in one answer: a field keeps its own error, a
 * refusal is added for a field that has none, all in the order of the form. A refusal that names no
 * field is left for the next submission: with a value missing it may be about that value.
 */
export function withRuleErrors(
  own: Errors,
  rules: { errors: Errors },
  fields: readonly Field[],
  extra: readonly string[] = [],
): { errors: Errors } {
  const keys = [...flatFields(fields).map((f) => f.key), ...extra];
  const errors = new Map([...rules.errors, ...own]);
  return { errors: new Map([...errors].sort(([a], [b]) => keys.indexOf(a) - keys.indexOf(b))) };
}

/** The customer's fields, checked as the API checks them and as a phone must read (decision 0095). */
export function customerErrors(desk: Desk, c: { name: string; phone: string; email: string }): Errors {
  const errors: Errors = new Map();
  const t = desk.t;
  if (!c.phone.trim())
    errors.set('customer.phone', t('error.required', { label: t('field.customer.phone') }));
  else if (c.phone.length > 40 || !normalPhone(c.phone))
    errors.set('customer.phone', t('error.phone', { label: t('field.customer.phone') }));
  if (c.name.length > 200)
    errors.set('customer.name', t('error.maxLength', { label: t('field.customer.name'), limit: '200' }));
  if (c.email.length > 200)
    errors.set('customer.email', t('error.maxLength', { label: t('field.customer.email'), limit: '200' }));
  return errors;
}

/**
 * The sale between steps (decision 0097): the product, the get-offers request, the chosen offer's
 * plain values and the form's one-time token, signed with an HMAC keyed by the session's own secret,
 * so a token is good only in the session that made it and nothing in it can be changed.
 */
export interface SaleState {
  product: string;
  quote: Record<string, unknown>;
  offer: Record<string, string | number | boolean | null>;
  /** The create-order form's one-time token: the idempotency key of the order (decision 0061). */
  once: string;
  /** Sell again: the order renewed and the new cover's first day. */
  renewal?: { orderId: string; startDate: string };
}

const macOf = (req: FastifyRequest, payload: string) =>
  createHmac('sha256', `polita-desk:${req.portalSession!.csrfSecret}`).update(payload).digest();

export function saleToken(req: FastifyRequest, sale: SaleState): string {
  const payload = Buffer.from(JSON.stringify(sale)).toString('base64url');
  return `${payload}.${macOf(req, payload).toString('base64url')}`;
}

const startAgain = () => badRequest('This form is incomplete: start again from Sell.');

export function saleOf(req: FastifyRequest, token: string): SaleState {
  const [payload = '', mac = ''] = token.split('.');
  const given = Buffer.from(mac, 'base64url');
  const expected = macOf(req, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw startAgain();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw startAgain();
  }
  if (!isSale(parsed)) throw startAgain();
  sellModule(parsed.product);
  return parsed;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isSale = (v: unknown): v is SaleState =>
  isRecord(v) &&
  typeof v.product === 'string' &&
  isRecord(v.quote) &&
  isRecord(v.offer) &&
  Object.values(v.offer).every((x) => x === null || typeof x !== 'object') &&
  typeof v.once === 'string' &&
  (v.renewal === undefined ||
    (isRecord(v.renewal) &&
      typeof v.renewal.orderId === 'string' &&
      typeof v.renewal.startDate === 'string'));

/** The renewal a quote form carries (hidden fields), if it is well formed. */
export const renewalIn = (body: Body): SaleState['renewal'] => {
  const orderId = one(body.renew_order);
  const startDate = one(body.renew_from);
  return /^\d{4}-\d{2}-\d{2}$/.test(startDate) && orderId ? { orderId, startDate } : undefined;
};
