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
