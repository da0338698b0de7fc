/** What the service recommends doing with a payment. */
export type Decision = 'approve' | 'review' | 'decline';
