import { z } from 'zod';

/** Model names: lower-case letters, digits and dashes, 1–64 chars, starting with a letter. */
export const MODEL_NAME_RE = /^[a-z][a-z0-9-]{0,63}$/;
/** Semantic version `MAJOR.MINOR.PATCH` (no pre-release/build suffix). */
export const MODEL_VERSION_RE = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$/;

const tensorSpec = z.strictObject({
  name: z.string().min(1),
  /** Dimensions; `-1` marks the dynamic batch dimension. */
  shape: z.array(z.number().int().gte(-1)).min(1),
  dtype: z.literal('float32'),
});

/** Schema of the JSON manifest stored next to each model file (`{version}.json`). */
export const manifestSchema = z.strictObject({
  schemaVersion: z.literal(1),
  name: z.string().regex(MODEL_NAME_RE),
  version: z.string().regex(MODEL_VERSION_RE),
  /** File name of the ONNX model, relative to the manifest. */
  file: z.string().min(1),
  /** Lower-case hex sha256 of the ONNX file. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  input: tensorSpec,
  output: tensorSpec,
  /**
   * Ordered input features: signal names (docs/signals.md), each computed by the signals version {@link signals}
   * names (the upload check refuses a feature it does not compute, naming it).
   */
  features: z.array(z.strictObject({ name: z.string().min(1), definition: z.string() })).min(1),
  /** The signals version the features come from; absent: the shipped one (`signals/default/1.0.0.json`). */
  signals: z
    .strictObject({
      name: z.string().regex(/^[a-z][a-z0-9-]{0,63}$/),
      version: z.string().regex(MODEL_VERSION_RE),
    })
    .optional(),
  /** Score thresholds: `score >= review` → review, `score >= decline` → decline. */
  thresholds: z
    .strictObject({ review: z.number().gt(0).lt(1), decline: z.number().gt(0).lt(1) })
    .refine((t) => t.review < t.decline, {
      error: 'review threshold must be below the decline threshold',
    }),
  /**
   * For models whose logit is linear in the features: logit contribution of feature i is
   * `coefficients[i] * (x[i] - baseline[i])`. Used for the response's `reasons`.
   */
  explanation: z
    .strictObject({
      kind: z.literal('linear'),
      coefficients: z.array(z.number()),
      baseline: z.array(z.number()),
    })
    .optional(),
  /** Hold-out metrics recorded at training time. */
  metrics: z.record(z.string(), z.number()).optional(),
  /** How the model was produced (seed, sample counts, hyper-parameters). */
  training: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).optional(),
  /** Reference inputs (rows of features) with the scores this version produced, for validation of later versions. */
  golden: z.strictObject({ inputs: z.array(z.array(z.number())), scores: z.array(z.number()) }).optional(),
  createdAt: z.string().optional(),
  /**
   * Training distribution of each feature (by name, in input order) and of the score, as bins: inner cut points
   * `edges` and the share of training rows in each bin `expected` (drift monitoring: `lib/learning/drift-bins.ts`).
   */
  drift: z
    .strictObject({
      features: z.array(
        z.strictObject({ name: z.string(), edges: z.array(z.number()), expected: z.array(z.number()) }),
      ),
      score: z.strictObject({ edges: z.array(z.number()), expected: z.array(z.number()) }),
    })
    .refine((d) => [...d.features, d.score].every((b) => b.expected.length === b.edges.length + 1), {
      error: 'each distribution needs one more share than edges',
    })
    .optional(),
});

/** A parsed model manifest. */
export type ModelManifest = z.infer<typeof manifestSchema>;
