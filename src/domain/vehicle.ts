/** The EU vehicle categories: the registries and the vignettes classify vehicles by them. */
export const EU_CATEGORIES = ['M1', 'M2', 'M3', 'N1', 'N2', 'N3', 'L', 'O1', 'O2', 'O3', 'O4'] as const;
export type EuCategory = (typeof EU_CATEGORIES)[number];

/**
 * A plate as registries store it: upper case, no spaces, except Austria and Germany whose plates
 * keep their internal spaces (single), district and serial being read apart there. Hyphens are
 * dropped too, except by vignette:ro (`keepHyphens`), whose plates have always kept them.
 */
export function normalisePlate(plate: string, country: string, opts: { keepHyphens?: boolean } = {}): string {
  const upper = plate.trim().toUpperCase();
  if (country === 'AT' || country === 'DE') return upper.replace(/\s+/g, ' ');
  return upper.replace(opts.keepHyphens ? /\s+/g : /[\s-]+/g, '');
}
