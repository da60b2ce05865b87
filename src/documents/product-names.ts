/**
 * The products by name on the policy PDF, which is Romanian whatever the portal's language (the
 * document the customer takes away): the Romanian portal catalogue's names, which
 * test/documents/policy-pdf.test.ts holds them to.
 */
export const PRODUCT_NAMES_RO: Readonly<Record<string, string>> = {
  rca: 'RCA: răspundere civilă auto (Moldova)',
  'vignette:md': 'Vinietă, Moldova (vehicule străine)',
  'vignette:eu': 'Vinietă, țări europene',
  'roadside-assistance-eu': 'Asistență rutieră în Europa',
  'green-card': 'Carte Verde: asigurare auto în străinătate',
  medical: 'Asigurare medicală de călătorie',
  baggage: 'Asigurarea bagajelor',
  'road-tax': 'Taxa de drum (Moldova)',
  'vignette:ro': 'Rovinietă (România)',
};
