import type { TSchema } from '@sinclair/typebox';
import type { Choice } from '../products/types.ts';
import type { DeskWords } from './labels.ts';

/**
 * Forms drawn from the request schemas of the partner API (docs/decisions/0060-sales-desk-forms-from-schemas.md):
 * a product's get-offers and create-order schemas are walked as JSON Schema, each property becoming
 * a form field of its type (dates, numbers, lists for enumerations and for the catalogue's values,
 * fieldsets for objects, rows for arrays), and a submitted form is read back into the request the
 * schema validates. Nothing here knows a product: a field added to a schema appears in its form.
 *
 * A field's form name is `f.` and its path (`f.foreign_vehicle.category`, `f.persons.0.birthday`);
 * an array's row count travels as `_rows.<path>`.
 */

type Json = Record<string, unknown>;

export interface Field {
  /** The path in the request, dot-separated (`persons.0.birthday`). */
  key: string;
  /** The form control's name and id. */
  name: string;
  id: string;
  label: string;
  help?: string;
  /** Required, and so are the groups it is in: the browser may insist on it. */
  required: boolean;
  /** Its group (or the request) may leave it out. */
  optional: boolean;
  /** Required only for another choice of its group (`only for a company`): said instead of optional. */
  note?: string;
  kind: 'text' | 'date' | 'number' | 'select' | 'multi' | 'group' | 'list';
  options?: readonly Choice[];
  step?: string;
  min?: number;
  max?: number;
  maxLength?: number;
  /** group: its fields; list: its rows. */
  children?: Field[];
  /** list: the rows it may have, and the words of one. */
  minRows?: number;
  maxRows?: number;
  itemLabel?: string;
  value: string | string[];
  error?: string;
}

/** A submitted form: names without the `f.` prefix, each one value or several. */
export type Values = Map<string, string | string[]>;

const props = (s: Json): [string, Json][] => Object.entries((s.properties ?? {}) as Record<string, Json>);
const requiredOf = (s: Json): string[] => (s.required ?? []) as string[];

/** The constants a schema allows, when it is a choice: an enum, a union of constants, one constant. */
function constantsOf(s: Json): unknown[] | undefined {
  if (Array.isArray(s.enum)) return s.enum as unknown[];
  if ('const' in s) return [s.const];
  const variants = s.anyOf as Json[] | undefined;
  if (variants?.length && variants.every((v) => 'const' in v)) return variants.map((v) => v.const);
  return undefined;
}

const isObject = (s: Json) => s.type === 'object' && s.properties !== undefined;
const isArray = (s: Json) => s.type === 'array';

/** Lists of values by path: the product's own, then any country field's. */
export type Choices = (key: string) => readonly Choice[] | undefined;

/** A field's id in the page, from its key (`persons.0.birthday` → `f-persons-0-birthday`). */
export const fieldId = (key: string) => `f-${key.replaceAll('.', '-').replaceAll(':', '-')}`;

/** The path with its row numbers taken out (`persons.0.birthday` → `persons.birthday`). */
export const pathOf = (key: string) =>
  key
    .split('.')
    .filter((p) => !/^\d+$/.test(p))
    .join('.');

const leafOf = (key: string) => pathOf(key).split('.').at(-1)!;

/**
 * What an object's `allOf` of `if {field: const} then {required}` asks for the choice made (the
 * value of that field, or its first choice when none is made yet, as its select shows): the names
 * it requires, and those it requires only for another choice (with that choice). A `then` of
 * alternatives (`anyOf` of `required`) asks for the first, and the others are left out of the form.
 */
function conditions(s: Json, prefix: string, values: Values) {
  const required = new Set<string>();
  const elsewhere = new Map<string, { field: string; value: string }>();
  const hidden = new Set<string>();
  for (const rule of (s.allOf ?? []) as Json[]) {
    const cond = Object.entries(((rule.if as Json | undefined)?.properties ?? {}) as Record<string, Json>)[0];
    const then = rule.then as Json | undefined;
    if (!cond || !then || !('const' in cond[1])) continue;
    const [field, { const: wanted }] = cond;
    const chosen =
      values.get(prefix + field) ?? constantsOf(props(s).find(([n]) => n === field)?.[1] ?? {})?.[0];
    const active = String(chosen) === String(wanted);
    const alternatives = ((then.anyOf ?? []) as Json[]).map((a) => requiredOf(a));
    const names = [...requiredOf(then), ...alternatives.map((a) => a[0]!).filter(Boolean)];
    for (const n of alternatives.slice(1).flat()) hidden.add(n);
    for (const n of names) {
      if (active) required.add(n);
      else elsewhere.set(n, { field, value: String(wanted) });
    }
  }
  for (const n of required) elsewhere.delete(n);
  return { required, elsewhere, hidden };
}

/**
 * The fields of an object schema, holding `values`; `errors` by key. Arrays have as many rows as
 * `rows` says (at least their minimum, and one).
 */
export function fieldsOf(
  schema: TSchema,
  o: {
    values: Values;
    rows: Map<string, number>;
    errors?: Map<string, string>;
    choices: Choices;
    words: DeskWords;
    skip?: Set<string>;
    /** Top-level fields the choices already made require (a vehicle registered in Moldova). */
    require?: Set<string>;
  },
): Field[] {
  const w = o.words;
  const walk = (s: Json, prefix: string, required: boolean): Field[] => {
    const c = conditions(s, prefix, o.values);
    return props(s)
      .filter(([name]) => !o.skip?.has(prefix + name) && !c.hidden.has(name))
      .map(([name, child]) => {
        const own =
          requiredOf(s).includes(name) || c.required.has(name) || (prefix === '' && !!o.require?.has(name));
        const f = field(child, prefix + name, required && own, !own);
        const other = c.elsewhere.get(name);
        if (!other) return f;
        const choice = w.choice(pathOf(prefix + other.field), other.value);
        return { ...f, optional: false, note: w.t('sell.onlyFor', { choice: choice.toLowerCase() }) };
      });
  };

  const field = (s: Json, key: string, required: boolean, optional = false): Field => {
    const base = {
      key,
      name: `f.${key}`,
      id: fieldId(key),
      label: w.label(pathOf(key)),
      required,
      optional,
      value: o.values.get(key) ?? '',
      ...(o.errors?.has(key) ? { error: o.errors.get(key)! } : {}),
    };
    const help = w.help(pathOf(key));
    const withHelp = help ? { ...base, help } : base;
    if (isObject(s)) return { ...withHelp, kind: 'group', children: walk(s, `${key}.`, required) };
    if (isArray(s)) {
      const items = s.items as Json;
      const choices =
        constantsOf(items)?.map((v) => ({ value: String(v), label: w.choice(pathOf(key), String(v)) })) ??
        o.choices(pathOf(key));
      if (choices)
        return { ...withHelp, kind: 'multi', options: choices, value: [o.values.get(key) ?? []].flat() };
      const minRows = Math.max(1, (s.minItems as number | undefined) ?? 1);
      const maxRows = (s.maxItems as number | undefined) ?? 20;
      const n = Math.min(maxRows, Math.max(minRows, o.rows.get(key) ?? minRows));
      const children = Array.from({ length: n }, (_, i) => {
        const row = field(items, `${key}.${i}`, required && i < minRows, i >= minRows);
        return { ...row, label: `${w.label(`${pathOf(key)}[]`)} ${i + 1}` };
      });
      return {
        ...withHelp,
        kind: 'list',
        children,
        minRows,
        maxRows,
        itemLabel: w.label(`${pathOf(key)}[]`),
      };
    }
    const constants = constantsOf(s);
    if (constants)
      return {
        ...withHelp,
        kind: 'select',
        options: constants.map((v) => ({ value: String(v), label: w.choice(pathOf(key), String(v)) })),
      };
    if (s.type === 'boolean') {
      const options = ['false', 'true'].map((v) => ({ value: v, label: w.choice(pathOf(key), v) }));
      return { ...withHelp, kind: 'select', options };
    }
    const listed = o.choices(pathOf(key)) ?? o.choices(leafOf(key));
    if (listed) return { ...withHelp, kind: 'select', options: listed };
    if (s.type === 'integer' || s.type === 'number') {
      return {
        ...withHelp,
        kind: 'number',
        step: s.type === 'integer' ? '1' : 'any',
        ...(typeof s.minimum === 'number' ? { min: s.minimum } : {}),
        ...(typeof s.maximum === 'number' ? { max: s.maximum } : {}),
      };
    }
    if (s.format === 'date') return { ...withHelp, kind: 'date' };
    return {
      ...withHelp,
      kind: 'text',
      ...(typeof s.maxLength === 'number' ? { maxLength: s.maxLength } : {}),
    };
  };

  return walk(schema as Json, '', true);
}

/** A submitted value as the schema types it; '' is no value (the field is left out). */
function leafValue(s: Json, raw: string): unknown {
  const v = raw.trim();
  if (v === '') return undefined;
  const constants = constantsOf(s);
  if (constants) return constants.find((c) => String(c) === v) ?? v;
  if (s.type === 'boolean') return v === 'true' ? true : v === 'false' ? false : v;
  if ((s.type === 'integer' || s.type === 'number') && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  return v;
}

/**
 * The request a form submitted, typed as `schema` says: empty fields are left out, as are groups
 * and rows with nothing in them. What does not fit (letters in a number) is passed on as typed,
 * for the schema to refuse with the API's reason.
 */
export function requestOf(
  schema: TSchema,
  values: Values,
  rows: Map<string, number>,
): Record<string, unknown> {
  const read = (s: Json, key: string): unknown => {
    if (isObject(s)) {
      const out: Record<string, unknown> = {};
      for (const [name, child] of props(s)) {
        const v = read(child, `${key}.${name}`);
        if (v !== undefined) out[name] = v;
      }
      return Object.keys(out).length ? out : undefined;
    }
    if (isArray(s)) {
      const items = s.items as Json;
      const given = values.get(key);
      if (given !== undefined && (Array.isArray(given) || !rows.has(key))) {
        const list = [given]
          .flat()
          .map((x) => leafValue(items, x))
          .filter((x) => x !== undefined);
        return list.length ? list : undefined;
      }
      const list = Array.from({ length: rows.get(key) ?? 0 }, (_, i) => read(items, `${key}.${i}`)).filter(
        (x) => x !== undefined,
      );
      return list.length ? list : undefined;
    }
    const raw = values.get(key);
    return leafValue(s, Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? ''));
  };
  const out: Record<string, unknown> = {};
  for (const [name, child] of props(schema as Json)) {
    const v = read(child, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/**
 * A request's values as form values (the inverse of requestOf): what one step hands the next, and
 * what a form shows again after a refusal.
 */
export function valuesOf(request: unknown, prefix = ''): { values: Values; rows: Map<string, number> } {
  const values: Values = new Map();
  const rows = new Map<string, number>();
  const put = (v: unknown, key: string) => {
    if (v === undefined || v === null) return;
    if (Array.isArray(v)) {
      if (v.every((x) => typeof x !== 'object' || x === null)) values.set(key, v.map(String));
      rows.set(key, v.length);
      v.forEach((x, i) => put(x, `${key}.${i}`));
      return;
    }
    if (typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) put(x, `${key}.${k}`);
      return;
    }
    values.set(key, String(v));
  };
  if (typeof request === 'object' && request !== null)
    for (const [k, v] of Object.entries(request)) put(v, `${prefix}${k}`);
  return { values, rows };
}

/** The field values and row counts of a submitted form body (`f.*`, `_rows.*`). */
export function formValues(body: Record<string, string | string[] | undefined>): {
  values: Values;
  rows: Map<string, number>;
} {
  const values: Values = new Map();
  const rows = new Map<string, number>();
  for (const [name, v] of Object.entries(body)) {
    if (v === undefined) continue;
    if (name.startsWith('f.')) values.set(name.slice(2), v);
    else if (name.startsWith('_rows.')) {
      const n = Number([v].flat()[0]);
      if (Number.isSafeInteger(n) && n >= 0 && n <= 100) rows.set(name.slice(6), n);
    }
  }
  return { values, rows };
}

/**
 * The field a reason names, when it names one of `keys`: a schema error's path
 * (`/foreign_vehicle` and its missing `category`) or a product rule's first words
 * (`start_date must be …`, `covered_territories: …`, `foreign_vehicle.vin is …`), or the field an
 * `Unknown …` names (`Unknown company_name …`).
 */
export function fieldOfReason(
  reason: string,
  keys: readonly string[],
  instancePath?: string,
): string | undefined {
  const candidates: string[] = [];
  if (instancePath !== undefined) candidates.push(instancePath.replace(/^\//, '').replaceAll('/', '.'));
  // `Unknown insurance_company acme` names its field second.
  const m = /^(?:Unknown (?=[a-z_]+ ))?([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|\/|\[)[A-Za-z0-9_]+\]?)*)/.exec(
    reason,
  );
  if (m) candidates.push(m[1]!.replaceAll('/', '.').replace(/\[(\d+)\]/g, '.$1'));
  for (const c of candidates) {
    for (let parts = c.split('.'); parts.length; parts = parts.slice(0, -1)) {
      const key = keys.find((k) => k.toLowerCase() === parts.join('.').toLowerCase());
      if (key) return key;
    }
  }
  return undefined;
}

/** Every key of a field tree (groups and lists included). */
export function keysOf(fields: readonly Field[]): string[] {
  return fields.flatMap((f) => [f.key, ...keysOf(f.children ?? [])]);
}
