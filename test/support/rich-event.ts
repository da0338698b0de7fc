import { validEvent } from './events';

/** Raw personal values of {@link richEvent}, as sent (tests check they never leave in clear). */
export const RICH = {
  email: 'Jane.Doe+shop@Example.COM',
  ipAddress: '2001:0DB8:0000:0000:0000:0000:0000:0001',
  fingerprint: 'fp_9f8e7d6c',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
} as const;

/** A valid payment event with every fraud-signal field (docs/api.md "Payment fields"); override any field. */
export function richEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...validEvent(),
    email: RICH.email,
    ipAddress: RICH.ipAddress,
    card: { bin: '411111', last4: '1111', fingerprint: RICH.fingerprint },
    billingAddress: { country: 'FR', postalCode: '75011' },
    shippingAddress: { country: 'DE', postalCode: '10115' },
    userAgent: RICH.userAgent,
    metadata: { campaign: 'black-friday', basketItems: 3, giftWrap: true, 'loyalty.tier': 'gold' },
    ...overrides,
  };
}
