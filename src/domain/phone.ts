import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * A customer's phone as one number however it was typed (decision 0095): libphonenumber-js reads it
 * as a Moldovan number unless it says otherwise (`069123456`, `+373 69 123 456` and `0037369123456`
 * are one number), and writes it in E.164 (`+37369123456`). Undefined when it is not a possible
 * phone number: then the order keeps only what was typed, and search falls back to its digits.
 */
export function normalPhone(text: string): string | undefined {
  const compact = text.trim().replace(/^00/, '+');
  if (!/\d{5}/.test(compact.replace(/\D/g, ''))) return undefined;
  const parsed = parsePhoneNumberFromString(compact, 'MD');
  return parsed?.isPossible() ? parsed.number : undefined;
}
