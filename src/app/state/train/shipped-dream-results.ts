/**
 * What the shipped learned experience models' dreams reach, as measured (plain data and logic,
 * unit-tested): the figures of docs/results/table1-webshop-lite-v0+household-v0.md (Table 1, test
 * split, 5 seeds, the env's easy preset at full size), so a page that starts a dream with a shipped
 * model can say what to expect before the run. The one place these figures live: copy them from
 * that file when it is regenerated.
 */
import { learnedPathOfSpec } from '../setup/learned-path';

/** The results file the figures below come from. */
export const SHIPPED_DREAM_SOURCE = 'docs/results/table1-webshop-lite-v0+household-v0.md';

export interface ShippedDreamResult {
  /** The preset and size the figures were measured at. */
  preset: string;
  iterations: number;
  seeds: number;
  /** GRPO in the shipped model's dream: held-out real success %, mean ± sample std over the seeds. */
  dreamMean: number;
  dreamStd: number;
  /** GRPO in the real environment, the same seeds and split. */
  realMean: number;
  /** Whether the dream falls far short of real RL (the page says so as a warning). */
  weak: boolean;
}

export const SHIPPED_DREAM_RESULTS: Readonly<Record<string, ShippedDreamResult>> = {
  'webshop-lite-v0': {
    preset: 'webshop-easy',
    iterations: 100,
    seeds: 5,
    dreamMean: 89.0,
    dreamStd: 1.7,
    realMean: 92.6,
    weak: false,
  },
  'household-v0': {
    preset: 'household-easy',
    iterations: 60,
    seeds: 5,
    dreamMean: 19.5,
    dreamStd: 9.3,
    realMean: 86.3,
    weak: true,
  },
};

export interface DreamExpectation {
  sentence: string;
  weak: boolean;
}

/**
 * What a dream (or S2R's dream phase) with `llm` on `env` can be expected to reach: only for the
 * model shipped for that env (another model, the oracle or a chat model has no measured figure).
 */
export function dreamExpectation(env: string, mode: string, llm: string): DreamExpectation | null {
  if (mode === 'real') return null;
  const path = learnedPathOfSpec(llm);
  const result = SHIPPED_DREAM_RESULTS[env];
  if (!result || path?.where !== 'shipped' || path.env !== env) return null;
  const measured =
    `What to expect: GRPO in the shipped ${env} model's dream reached ${result.dreamMean.toFixed(1)} ± ` +
    `${result.dreamStd.toFixed(1)} % held-out real success, against ${result.realMean.toFixed(1)} % for GRPO in ` +
    `the real environment (${result.preset}, ${result.iterations} iterations, test split, ${result.seeds} seeds; ` +
    `${SHIPPED_DREAM_SOURCE}).`;
  const caution = result.weak
    ? ' This dream teaches far less than real RL: a low real success here is the model, not a broken run.'
    : '';
  return { sentence: measured + caution, weak: result.weak };
}
