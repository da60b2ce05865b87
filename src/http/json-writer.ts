/**
 * A JSON serialiser built from a response schema that answers UTF-8 bytes, for a reply made mostly
 * of catalogue text (get-offers medical). It writes what fast-json-stringify writes for the same
 * schema and value, byte for byte (test/http/json-writer.test.ts compares them), with one addition:
 * a value that is deeply frozen is encoded once per schema position and its bytes are reused.
 *
 * Why: most of a medical quote is the coverage lists of the companies, the same frozen lists on
 * every request. Serialising them to a string and encoding that string (it has diacritics, so it
 * is a two-byte string) was most of the request (decision 0041). `npm run bench:json` measures it
 * against fast-json-stringify on every product's quote.
 *
 * Only the keywords the response schemas use are understood: object (properties,
 * patternProperties), array (items), string, number, integer, boolean, const, a union of one
 * primitive type, and $ref to a shared schema. Anything else throws when compiling, so a schema
 * this cannot write exactly is refused at start-up rather than written differently.
 */

type Schema = Record<string, unknown>;

/**
 * Output under construction: one string of bytes, each character one byte of the UTF-8 answer
 * (a "binary" string: ASCII as it is, any other text as its UTF-8 bytes, one character each),
 * turned into a buffer by one latin1 copy at the end. Pieces are joined as V8 joins strings (a rope,
 * flattened once by that copy): a list of parts copied one by one, a native call each, cost an RCA
 * quote's answer more than the writing of it.
 */
class Out {
  /** Whether the object being written has no property yet (objects save and restore it around theirs). */
  first = true;
  private text = '';

  /** Bytes as a binary string: ASCII text, or what {@link encoded} made of other text. */
  put(bytes: string): void {
    this.text += bytes;
  }

  /** JSON text that may not be ASCII. */
  json(text: string): void {
    this.text += encoded(text);
  }

  /** The bytes written so far, as a binary string (for a memo). */
  done(): string {
    return this.text;
  }

  finish(): Buffer {
    return Buffer.from(this.text, 'latin1');
  }
}

// Any character above U+007F makes the text not ASCII.
const ASCII = /^[^\u0080-\uffff]*$/;

/** JSON text as Out takes it: ASCII as it is, anything else as its UTF-8 bytes in a binary string. */
const encoded = (text: string): string => (ASCII.test(text) ? text : Buffer.from(text).toString('latin1'));

type Write = (value: unknown, out: Out) => void;

export type JsonWriter = (value: unknown) => Buffer;

export function compileJsonWriter(schema: Schema, shared: Schema[] = []): JsonWriter {
  const byId = new Map(shared.map((s) => [s.$id as string, s]));
  const compiled = new Map<Schema, Write>();

  function compile(s: Schema, at: string): Write {
    const known = compiled.get(s);
    if (known) return known;
    // A $ref may point back at a schema being compiled: calls go through this slot.
    let write: Write = () => {
      throw new Error(`json-writer: ${at} used before it was compiled`);
    };
    compiled.set(s, (v, out) => write(v, out));
    write = build(s, at);
    compiled.set(s, write);
    return write;
  }

  function build(s: Schema, at: string): Write {
    const { $ref, type } = s;
    if (typeof $ref === 'string') {
      const target = byId.get($ref);
      if (!target) throw new Error(`json-writer: unknown $ref ${$ref} at ${at}`);
      return compile(target, $ref);
    }
    if ('const' in s) return primitive(typeof s.const as string, at);
    if (Array.isArray(s.anyOf)) {
      const types = new Set((s.anyOf as Schema[]).map((b) => ('const' in b ? typeof b.const : b.type)));
      if (types.size !== 1) throw new Error(`json-writer: a union of several types at ${at}`);
      return primitive([...types][0] as string, at);
    }
    if (type === 'object') return memoised(object(s, at));
    if (type === 'array') {
      const item = compile(
        (s.items as Schema | undefined) ?? refuse(at, 'an array without items'),
        `${at}[]`,
      );
      return memoised((v, out) => {
        if (!Array.isArray(v)) throw new TypeError(`json-writer: ${at} is not an array`);
        out.put('[');
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out.put(',');
          item(v[i], out);
        }
        out.put(']');
      });
    }
    return primitive(type as string, at);
  }

  function object(s: Schema, at: string): Write {
    const unknownKeys = Object.keys(s).filter((k) => !OBJECT_KEYWORDS.has(k));
    if (unknownKeys.length) refuse(at, `the keywords ${unknownKeys.join(', ')}`);
    if (s.additionalProperties !== undefined && s.additionalProperties !== false)
      refuse(at, 'additionalProperties');
    const required = new Set((s.required as string[] | undefined) ?? []);
    // Required properties first, each group in schema order, as fast-json-stringify writes them.
    const props = Object.entries((s.properties as Record<string, Schema> | undefined) ?? {})
      .sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)))
      .map(([key, sub]) => ({
        key,
        label: encoded(`${JSON.stringify(key)}:`),
        write: compile(sub, `${at}.${key}`),
      }));
    const patterns = Object.entries((s.patternProperties as Record<string, Schema> | undefined) ?? {}).map(
      ([pattern, sub]) => ({ re: new RegExp(pattern), write: compile(sub, `${at}[${pattern}]`) }),
    );
    const named = new Set(props.map((p) => p.key));
    const rest: Write | null = patterns.length
      ? (o, out) => {
          for (const [key, value] of Object.entries(o as Record<string, unknown>)) {
            if (named.has(key) || value === undefined || typeof value === 'function') continue;
            const match = patterns.find((p) => p.re.test(key));
            if (!match) continue;
            out.put(out.first ? '' : ',');
            out.json(`${JSON.stringify(key)}:`);
            out.first = false;
            match.write(value, out);
          }
        }
      : null;
    return objectWriter(props, required, rest, at);
  }

  const root = compile(schema, (schema.$id as string | undefined) ?? 'root');
  return (value) => {
    const out = new Out();
    root(value, out);
    return out.finish();
  };
}

/**
 * The writer of one object shape: its listed properties in the order fast-json-stringify writes
 * them (required ones first), each one that is present, then the pattern properties.
 */
function objectWriter(
  props: { key: string; label: string; write: Write }[],
  required: Set<string>,
  rest: Write | null,
  at: string,
): Write {
  const fields = props.map((p) => ({ ...p, next: `,${p.label}`, required: required.has(p.key) }));
  return (o, out) => {
    if (o === null || typeof o !== 'object') throw new TypeError(`json-writer: ${at} is not an object`);
    const value = o as Record<string, unknown>;
    const outer = out.first;
    out.put('{');
    out.first = true;
    for (const f of fields) {
      const v = value[f.key];
      if (v !== undefined) {
        out.put(out.first ? f.label : f.next);
        out.first = false;
        f.write(v, out);
      } else if (f.required) throw new Error(`"${f.key}" is required!`);
    }
    if (rest !== null) rest(o, out);
    out.put('}');
    out.first = outer;
  };
}

const OBJECT_KEYWORDS = new Set([
  'type',
  'properties',
  'patternProperties',
  'required',
  'additionalProperties',
  '$id',
  'title',
  'description',
  'examples',
]);

function refuse(at: string, what: string): never {
  throw new Error(`json-writer: ${what} at ${at} is not supported`);
}

/** A deeply frozen value cannot change: its bytes at this position are kept (weakly, with it). */
function memoised(write: Write): Write {
  const memo = new WeakMap<object, string>();
  return (v, out) => {
    if (v === null || typeof v !== 'object' || !Object.isFrozen(v)) return write(v, out);
    let bytes = memo.get(v);
    if (!bytes) {
      const own = new Out();
      write(v, own);
      bytes = own.done();
      if (deeplyFrozen(v)) memo.set(v, bytes);
    }
    out.put(bytes);
  };
}

function deeplyFrozen(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  return Object.isFrozen(v) && Object.values(v).every(deeplyFrozen);
}

function primitive(type: string, at: string): Write {
  switch (type) {
    case 'string':
      return stringWriter(at);
    case 'number':
      return (v, out) => {
        const n = Number(v);
        if (Number.isNaN(n)) throw new Error(`The value "${String(v)}" cannot be converted to a number.`);
        out.put(Number.isFinite(n) ? `${n}` : 'null');
      };
    case 'integer':
      return (v, out) => {
        if (Number.isInteger(v)) {
          out.put(`${v as number}`);
          return;
        }
        const n = Math.trunc(Number(v));
        if (!Number.isFinite(n))
          throw new Error(`The value "${String(v)}" cannot be converted to an integer.`);
        out.put(`${n}`);
      };
    case 'boolean':
      return (v, out) => {
        out.put(v ? 'true' : 'false');
      };
    default:
      return refuse(at, `type ${type}`);
  }
}

/**
 * Strings at one schema position. The encoded text of each value is kept while the position has
 * seen few distinct values (catalogue names, labels, URLs); a position that sees many (names with a
 * plate number in them) stops keeping them and encodes each value as it comes.
 */
function stringWriter(at: string): Write {
  const KEEP = 256;
  let kept: Map<string, string> | null = new Map();
  return (v, out) => {
    if (typeof v !== 'string') return out.put(stringOf(v, at));
    if (!kept) return out.json(JSON.stringify(v));
    let part = kept.get(v);
    if (part === undefined) {
      part = encoded(JSON.stringify(v));
      if (kept.size < KEEP) kept.set(v, part);
      else kept = null;
    }
    out.put(part);
  };
}

function stringOf(v: unknown, at: string): string {
  if (v === null) return '""';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint')
    return JSON.stringify(String(v));
  throw new TypeError(`json-writer: ${at} is not a string`);
}
