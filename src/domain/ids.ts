/**
 * Order ids: three letters naming the first product, six digits, three letters
 * (ROV123456ABC). Randomness comes in as bytes so the rule stays pure and testable.
 */
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function orderId(prefix: string, random: Uint8Array): string {
  if (!/^[A-Z]{3}$/.test(prefix)) throw new Error(`bad order id prefix ${prefix}`);
  if (random.length < 9) throw new Error('orderId needs 9 random bytes');
  let digits = '';
  for (let i = 0; i < 6; i++) digits += String(random[i]! % 10);
  let letters = '';
  for (let i = 6; i < 9; i++) letters += LETTERS[random[i]! % 26];
  return `${prefix}${digits}${letters}`;
}

export const ORDER_ID_PATTERN = '^[A-Z]{3}[0-9]{6}[A-Z]{3}$';
