import { Type, type TUnsafe } from '@sinclair/typebox';

/** A string enumeration: its schema error lists the values (server.ts writes "must be one of: …"). */
export const StringEnum = <T extends string>(values: readonly T[], description?: string): TUnsafe<T> =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

export const EU_CATEGORIES = ['M1', 'M2', 'M3', 'N1', 'N2', 'N3', 'L', 'O1', 'O2', 'O3', 'O4'] as const;

/** The same enumeration for catalogue schemas, which TypeBox's own checker validates (it knows no Unsafe). */
export const OneOfLiterals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((v) => Type.Literal(v)));
