/** The case page's "Second opinion": the LLM escalation's outcome and verdict in a fixed, labelled order. */
import { h } from './dom.js';

const OUTCOME: Readonly<Record<string, string>> = {
  ok: 'Answered',
  capped: 'Not asked: the share of payments sent for a second opinion was reached',
  breaker_open: 'Not asked: the LLM was failing, calls are paused',
  busy: 'Not asked: too many calls in flight',
  timeout: 'No answer in time',
  rate_limited: 'Refused: too many calls (rate limited)',
  server_error: 'The LLM service failed',
  refused: 'The LLM refused to answer',
  invalid_output: 'The answer was not usable',
  error: 'The call failed',
};

const TRIGGER: Readonly<Record<string, string>> = {
  band: 'score near the thresholds',
  note: "the merchant's note",
  requested: 'asked for by the merchant',
  rule: 'a rule asked for it',
};

function text(v: unknown): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

/** The escalation block's fields, labelled, in order; an unknown field is shown last under its name. */
export function secondOpinion(e: Readonly<Record<string, unknown>>): HTMLElement {
  const llm = (typeof e['llm'] === 'object' && e['llm'] !== null ? e['llm'] : {}) as Record<string, unknown>;
  const tokens = (typeof e['tokens'] === 'object' && e['tokens'] !== null ? e['tokens'] : {}) as Record<
    string,
    unknown
  >;
  const triggers = Array.isArray(e['triggers']) ? (e['triggers'] as unknown[]) : [];
  const reasons = Array.isArray(llm['reasons']) ? (llm['reasons'] as unknown[]) : [];
  const rows: [string, string | HTMLElement | undefined][] = [
    ['Outcome', e['outcome'] === undefined ? undefined : (OUTCOME[text(e['outcome'])] ?? text(e['outcome']))],
    [
      'Why it was asked',
      triggers.length === 0 ? undefined : triggers.map((t) => TRIGGER[text(t)] ?? text(t)).join('; '),
    ],
    ["The LLM's risk level", llm['riskLevel'] === undefined ? undefined : text(llm['riskLevel'])],
    ["The LLM's score", typeof llm['score'] === 'number' ? llm['score'].toFixed(3) : undefined],
    [
      "The LLM's reasons",
      reasons.length === 0
        ? undefined
        : h(
            'ul',
            {},
            reasons.map((r) => h('li', {}, text(r))),
          ),
    ],
    ["The LLM's decision", llm['decision'] === undefined ? undefined : text(llm['decision'])],
    ['The local decision', e['localDecision'] === undefined ? undefined : text(e['localDecision'])],
    ['Why the local result stands', e['reason'] === undefined ? undefined : text(e['reason'])],
    ['Model', e['model'] === undefined ? undefined : text(e['model'])],
    ['Time taken', typeof e['latencyMs'] === 'number' ? `${e['latencyMs']} ms` : undefined],
    [
      'Tokens',
      tokens['prompt'] === undefined ? undefined : `${text(tokens['prompt'])} in, ${text(tokens['completion'])} out`,
    ],
    ['Estimated cost', typeof e['costUsd'] === 'number' ? `${e['costUsd'].toFixed(4)} USD` : undefined],
  ];
  const known = new Set([
    'outcome',
    'triggers',
    'llm',
    'localDecision',
    'reason',
    'model',
    'latencyMs',
    'tokens',
    'costUsd',
  ]);
  for (const [k, v] of Object.entries(e)) if (!known.has(k)) rows.push([k, text(v)]);
  return h(
    'dl',
    { class: 'fields', id: 'second-opinion' },
    rows.filter(([, v]) => v !== undefined).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
}
