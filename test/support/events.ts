import type { PaymentEvent } from '../../lib/domain/payment-event';

/** A valid payment event; override any field. */
export function validEvent(overrides: Partial<Record<keyof PaymentEvent, unknown>> = {}): Record<string, unknown> {
  return {
    transactionId: 'tx-0001',
    userId: 'user-42',
    sessionId: 'sess-1',
    amount: 129.95,
    currency: 'EUR',
    merchantId: 'm-991',
    merchantCategory: '5411',
    country: 'FR',
    ipCountry: 'FR',
    deviceId: 'dev-abc',
    channel: 'web',
    timestamp: '2026-11-30T10:15:00+01:00',
    ...overrides,
  };
}
