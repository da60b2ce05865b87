/**
 * Moldovan identity numbers: 13 digits, the last a check digit (weights 7, 3, 1 repeating over
 * digits 1–12, sum modulo 10). IDNP (a person) starts with 2 or 09; IDNO (an organisation) with 1.
 */
const WEIGHTS = [7, 3, 1];

export function hasValidCheckDigit(value: string): boolean {
  if (!/^\d{13}$/.test(value)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(value[i]) * WEIGHTS[i % 3]!;
  return sum % 10 === Number(value[12]);
}

export const isIdnp = (v: string): boolean =>
  (v.startsWith('2') || v.startsWith('09')) && hasValidCheckDigit(v);
export const isIdno = (v: string): boolean => v.startsWith('1') && hasValidCheckDigit(v);
export const isIdnx = (v: string): boolean => isIdnp(v) || isIdno(v);

/** The reason an idnx/idnp is refused, or null when it is valid. */
export function idnxProblem(field: string, value: string, kind: 'idnx' | 'idnp'): string | null {
  if (!/^\d{13}$/.test(value)) return `${field} must be 13 digits`;
  if (!hasValidCheckDigit(value)) return `${field} has an invalid check digit`;
  if (kind === 'idnp' && !isIdnp(value)) return `${field} must be an IDNP (a person's number)`;
  if (kind === 'idnx' && !isIdnx(value)) return `${field} must be an IDNP or an IDNO`;
  return null;
}
