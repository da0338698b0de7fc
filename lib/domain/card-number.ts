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

/** Maximal runs of digit groups split by single spaces or dashes (`4111 1111-…`; one group: plain digits). */
const DIGIT_RUN = /\d+(?:[ -]\d+)*/g;

/**
 * Whether a string holds a card number anywhere: consecutive digit groups of one run (groups split by single
 * spaces or dashes; one group is a plain digit run) whose 13–19 digits pass the Luhn check ({@link isCardNumber}).
 * For fields where a card number could be smuggled inside other text (metadata values, user agent, tokens):
 * `Mozilla/5.0 4111 1111 1111 1111` holds one, though its run starts with the `0` of `5.0`.
 */
export function containsCardNumber(value: string): boolean {
  let count = 0;
  for (let i = 0; i < value.length && count < 13; i++) {
    const c = value.charCodeAt(i);
    if (c >= 48 && c <= 57) count++;
  }
  if (count < 13) return false; // the common case: too few digits to hold one
  for (const m of value.matchAll(DIGIT_RUN)) {
    const groups = m[0].split(/[ -]/);
    for (let i = 0; i < groups.length; i++) {
      let digits = '';
      for (let j = i; j < groups.length && digits.length <= 19; j++) {
        digits += groups[j] ?? '';
        if (digits.length >= 13 && digits.length <= 19 && isCardNumber(digits)) return true;
      }
    }
  }
  return false;
}
