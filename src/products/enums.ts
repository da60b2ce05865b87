import { Type, type SchemaOptions, type TUnsafe } from '@sinclair/typebox';

/** A string enumeration: its schema error lists the values (server.ts writes "must be one of: …"). */
export const StringEnum = <T extends string>(values: readonly T[], description?: string): TUnsafe<T> =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

/** The same enumeration for catalogue schemas, which TypeBox's own checker validates (it knows no Unsafe). */
export const OneOfLiterals = <T extends string>(values: readonly T[], options?: SchemaOptions) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
