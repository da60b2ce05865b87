import type { T } from './i18n.ts';

/**
 * Refusals in the clerk's language (decision 0097). The use cases refuse in the partner API's
 * English words, which partners read on the wire and which stay as they are; the portal shows each
 * refusal it knows by its catalogue message (`reason.*`), with the values the English one named.
 * A refusal not listed here is shown as the API words it.
 */
const REASONS: readonly (readonly [RegExp, string])[] = [];

export function say(t: T, reason: string): string {
  const text = reason.replace(/^\[API\]\s*/, '');
  for (const [pattern, key] of REASONS) {
    const m = pattern.exec(text);
    if (m) return t(key, { ...m.groups });
  }
  return text;
}
