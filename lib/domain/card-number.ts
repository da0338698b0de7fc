/** Whether a string looks like a card number (PAN): 13–19 digits that pass the Luhn check. */
export function isCardNumber(value: string): boolean {
  if (!/^\d{13,19}$/.test(value)) return false;
  let sum = 0;
  for (let i = value.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = value.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Maximal digit runs, and maximal runs of digits split by single spaces or dashes (`4111 1111-…`). */
const DIGIT_RUN = /\d+/g;
const SEPARATED_RUN = /\d(?:[ -]?\d)*/g;

/**
 * Whether a string holds a card number anywhere: a maximal run of 13–19 digits, or of 13–19 digits split by
 * single spaces or dashes, that passes the Luhn check ({@link isCardNumber}). For fields where a card number
 * could be smuggled inside other text (metadata values, user agent, tokens).
 */
export function containsCardNumber(value: string): boolean {
  if (!/\d{4}/.test(value)) return false; // the common case: no long digit run at all
  for (const re of [DIGIT_RUN, SEPARATED_RUN])
    for (const m of value.matchAll(re)) {
      const digits = m[0].replace(/[ -]/g, '');
      if (digits.length >= 13 && digits.length <= 19 && isCardNumber(digits)) return true;
    }
  return false;
}
