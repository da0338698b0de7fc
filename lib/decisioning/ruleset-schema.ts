/**
 * The ruleset document (`rulesets/{name}/{version}.json`), checked with zod: lists it uses, ordered rules,
 * score offsets, merchant profiles and golden cases. Expressions are CEL source text here; compiling them is
 * `compileRuleset`'s job.
 */
import { z } from 'zod';
import { SIGNALS_NAME_RE, SIGNALS_VERSION_RE } from '../signals/signals-document';

/** The event fields a list may be keyed by. */
export const LIST_KEY_FIELDS = ['userId', 'deviceId', 'merchantId', 'country', 'ipCountry', 'cardFingerprint'] as const;
/** An event field a list is keyed by. */
export type ListKeyField = (typeof LIST_KEY_FIELDS)[number];

/** Rule actions, in the order they are evaluated. */
export const ACTIONS = ['allow', 'block', 'review', 'escalate'] as const;
/** What a rule does when it fires. */
export type Action = (typeof ACTIONS)[number];

const ident = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z][A-Za-z0-9_.-]*$/, { error: 'must start with a letter; letters, digits, _ . - only' });
const expr = z.string().min(1).max(4000);
const unit = z.number().finite().min(0).max(1);
const decisionSchema = z.enum(['approve', 'review', 'decline']);

const profileSchema = z.strictObject({
  id: ident,
  thresholds: z
    .strictObject({ review: unit, decline: unit })
    .refine((t) => t.review <= t.decline, { error: 'review must be at most decline' }),
  offset: z.number().finite().min(-1).max(1).default(0),
  /** Chosen for these merchants (first match by merchantId wins over any category match). */
  merchantIds: z.array(z.string().min(1).max(128)).max(1000).default([]),
  /** Chosen for these merchant category codes (4 digits). */
  merchantCategories: z
    .array(z.string().regex(/^\d{4}$/))
    .max(1000)
    .default([]),
});

const goldenSchema = z.strictObject({
  name: z.string().min(1).max(128),
  /** Event fields (a payment event, not validated against the payment schema beyond being an object). */
  event: z.record(z.string(), z.unknown()),
  features: z.record(z.string(), z.number()).default({}),
  velocity: z.record(z.string(), z.number()).default({}),
  /** Signal values by name (`signals.<name>`); a signal a rule reads but the case omits fails closed. */
  signals: z.record(z.string(), z.number()).default({}),
  /** The model score; `null` = no valid score. */
  score: unit.nullable(),
  /** Lists and their entries for this case. */
  lists: z.record(z.string(), z.array(z.string())).default({}),
  expect: z.strictObject({
    decision: decisionSchema,
    rules: z.array(ident).default([]),
    profile: ident.optional(),
    escalate: z.boolean().optional(),
    /**
     * Rules whose expression is expected to fail at run time on this case (the fail-closed path): the case passes
     * only if exactly these rules error; default none.
     */
    errors: z.array(ident).default([]),
  }),
});

/** Schema of a ruleset document. Unknown fields are rejected. */
export const rulesetSchema = z
  .strictObject({
    name: ident,
    version: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/),
    description: z.string().max(2000).optional(),
    /** The signals version the rules read (`signals.<name>`): its names are the ones the rules may use. */
    signals: z
      .strictObject({
        name: z.string().regex(SIGNALS_NAME_RE, { error: 'must be a signals name like default' }),
        version: z.string().regex(SIGNALS_VERSION_RE, { error: 'must be a version MAJOR.MINOR.PATCH' }),
      })
      .optional(),
    lists: z
      .array(z.strictObject({ name: ident, key: z.enum(LIST_KEY_FIELDS) }))
      .max(64)
      .default([]),
    rules: z
      .array(
        z.strictObject({
          id: ident,
          description: z.string().max(500).default(''),
          when: expr,
          action: z.enum(ACTIONS),
        }),
      )
      .max(500)
      .default([]),
    offsets: z
      .array(z.strictObject({ id: ident, when: expr, offset: z.number().finite().min(-1).max(1) }))
      .max(100)
      .default([]),
    /** Merchant profiles; one with id `default` replaces the model's thresholds as the fallback. */
    profiles: z.array(profileSchema).max(200).default([]),
    golden: z.array(goldenSchema).max(500).default([]),
  })
  .superRefine((r, ctx) => {
    const dup = (kind: string, ids: readonly string[]): void => {
      const seen = new Set<string>();
      ids.forEach((id, i) => {
        if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [kind, i, 'id'], message: `duplicate id "${id}"` });
        seen.add(id);
      });
    };
    dup('rules', [...r.rules.map((x) => x.id), ...r.offsets.map((x) => x.id)]);
    dup(
      'profiles',
      r.profiles.map((p) => p.id),
    );
    const names = new Set<string>();
    r.lists.forEach((l, i) => {
      if (names.has(l.name)) ctx.addIssue({ code: 'custom', path: ['lists', i, 'name'], message: 'duplicate list' });
      names.add(l.name);
    });
  });

/** A ruleset document as parsed (defaults applied). */
export type RulesetDocument = z.infer<typeof rulesetSchema>;
/** One merchant profile of a ruleset. */
export type ProfileDocument = RulesetDocument['profiles'][number];
/** One golden case of a ruleset. */
export type GoldenCase = RulesetDocument['golden'][number];
