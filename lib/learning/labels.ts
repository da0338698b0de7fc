/**
 * Labels: what was learnt about a transaction after its decision (a chargeback, an analyst's verdict...).
 * `POST /api/labels` validates a batch ({@link parseLabels}) and stores each label once per (transactionId,
 * label) beside the decision log ({@link LabelStore}); a label whose decision is not logged yet is kept and
 * joined when the dataset is exported.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { identifierString } from '../domain/text';
import { AppError, type FieldError } from '../errors/errors';
import { inputFieldErrorsOf } from '../errors/field-errors';
import type { LearningStore } from './learning-store';

/** The labels a transaction can get. `fraud` and `chargeback` are positives in a training set. */
export const LABELS = ['fraud', 'legit', 'chargeback', 'refund', 'dispute_won'] as const;
export type LabelValue = (typeof LABELS)[number];

/** Most labels per call. */
export const MAX_LABELS_PER_CALL = 1000;

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

const labelSchema = z.strictObject({
  transactionId: identifierString({ max: 128 }),
  label: z.enum(LABELS, { error: `must be one of ${LABELS.join(', ')}` }),
  reportedAt: z
    .string({ error: 'must be an ISO 8601 date-time with a zone' })
    .regex(ISO_WITH_ZONE, { error: 'must be an ISO 8601 date-time with a zone (Z or ±hh:mm)' })
    .refine((t) => Number.isFinite(Date.parse(t)), { error: 'must be a valid date-time' }),
  source: identifierString({ max: 64 }).optional(),
});

/** One label as submitted. */
export type Label = z.infer<typeof labelSchema>;

/** One label as stored (`labels/{xx}/{sha256}.json`). */
export interface StoredLabel extends Label {
  /** When this service first received it (ISO 8601 UTC). */
  readonly receivedAt: string;
}

/**
 * Validates a `POST /api/labels` body: `{ "labels": [ ... ] }`, 1 to {@link MAX_LABELS_PER_CALL} labels.
 * @throws AppError `validation_failed` naming every invalid field (`labels.3.label`...), `payload_too_large` over the cap.
 */
export function parseLabels(body: unknown): Label[] {
  const list = (body as { labels?: unknown } | null)?.labels;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Array.isArray(list))
    throw new AppError('validation_failed', 'The body must be { "labels": [...] }.', {
      errors: [{ path: 'labels', message: 'must be an array of labels' }],
    });
  const extra = Object.keys(body).filter((k) => k !== 'labels');
  if (list.length > MAX_LABELS_PER_CALL)
    throw new AppError('payload_too_large', `At most ${MAX_LABELS_PER_CALL} labels per call.`, {
      errors: [{ path: 'labels', message: `must hold at most ${MAX_LABELS_PER_CALL} labels` }],
    });
  const errors: FieldError[] = extra.map((k) => ({ path: k, message: 'unknown field' }));
  if (list.length === 0) errors.push({ path: 'labels', message: 'must hold at least one label' });
  const out: Label[] = [];
  list.forEach((item, i) => {
    const r = labelSchema.safeParse(item);
    if (r.success) return void out.push(r.data);
    errors.push(...inputFieldErrorsOf(r.error.issues, item, `labels.${i}`));
  });
  if (errors.length > 0) throw new AppError('validation_failed', `${errors.length} invalid field(s).`, { errors });
  return out;
}

/** The store name of a (transactionId, label) pair: the same pair always maps to the same object. */
export function labelName(transactionId: string, label: LabelValue): string {
  const h = createHash('sha256').update(`${transactionId}\n${label}`, 'utf8').digest('hex');
  return `labels/${h.slice(0, 2)}/${h}.json`;
}

/** Result of {@link LabelStore.add}. */
export interface LabelsAdded {
  /** Labels stored by this call. */
  readonly accepted: number;
  /** Labels already stored (same transaction and label): unchanged. */
  readonly duplicates: number;
}

/** Labels beside the decision log: one object per (transactionId, label), created only if absent. */
export class LabelStore {
  constructor(
    private readonly store: LearningStore,
    private readonly wallClock: () => number = Date.now,
  ) {}

  /**
   * Stores each label unless the same (transactionId, label) is already stored (the first report wins).
   * @throws AppError `dependency_unavailable` (transient) when the store fails; a retry is safe.
   */
  async add(labels: readonly Label[]): Promise<LabelsAdded> {
    const receivedAt = new Date(this.wallClock()).toISOString();
    let accepted = 0;
    const unique = new Map(labels.map((l) => [labelName(l.transactionId, l.label), l]));
    const entries = [...unique];
    try {
      for (let i = 0; i < entries.length; i += 32) {
        const created = await Promise.all(
          entries.slice(i, i + 32).map(([name, l]) => {
            const stored: StoredLabel = { ...l, receivedAt };
            return this.store.createIfAbsent(name, `${JSON.stringify(stored)}\n`);
          }),
        );
        accepted += created.filter(Boolean).length;
      }
    } catch (err) {
      throw new AppError('dependency_unavailable', 'The label store is unavailable; retry the call.', {
        cause: err,
        transient: true,
        retryAfterSec: 5,
      });
    }
    return { accepted, duplicates: labels.length - accepted };
  }

  /** Every stored label (offline: dataset export, backtest). */
  async all(): Promise<StoredLabel[]> {
    const out: StoredLabel[] = [];
    for (const name of await this.store.list('labels/')) {
      const text = await this.store.read(name);
      if (text !== undefined && text.trim() !== '') out.push(JSON.parse(text) as StoredLabel);
    }
    return out;
  }
}
