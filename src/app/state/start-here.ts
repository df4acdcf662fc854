/**
 * The start-here path's plain logic (no Svelte, unit-tested in Node): the three DreamGym runs on
 * one tiny preset — real RL (the baseline), dream (zero real steps) and S2R (dream, then a small
 * real budget) — their configs, names and one-sentence explanations, and which experience model
 * the dream uses: the learned model shipped for the environment when the build has one, else the
 * noisy oracle, labelled as such.
 */
import { getPreset, validateConfig, type Mode, type TrainConfig } from '../../core/train/config';
import { llmSpecLabel } from '../../core/llm/spec';
import { learnedPathLabel, learnedSpec } from './learned-path';
import { START_HERE_TAG, type RunEntry } from '../workers/run-list';

export const START_HERE_ENV = 'webshop-lite-v0';
export const START_HERE_PRESET = 'webshop-easy';

/** The noisy oracle of the start-here dream when no learned model is shipped (the LLM demo presets were tuned with it). */
export const START_HERE_ORACLE = 'oracle:0.1,0.1';

export interface StartHereRun {
  mode: Mode;
  name: string;
  /** What the run means, in one sentence. */
  sentence: string;
}

export const START_HERE_RUNS: readonly StartHereRun[] = [
  { mode: 'real', name: 'Real RL (baseline)', sentence: 'Every training step is an interaction with the real environment: the cost DreamGym sets out to cut.' },
  { mode: 'dream', name: 'Dream (0 real steps)', sentence: 'The experience model dreams every next state and reward; the agent never touches the real environment while it trains.' },
  { mode: 's2r', name: 'S2R (dream, then 10% real)', sentence: 'Dream first, then spend a tenth of the baseline\u2019s real budget in the real environment.' },
];

/**
 * The tiny preset: 2 tasks × 4 rollouts per iteration, 40 iterations, a held-out evaluation every
 * 4 iterations on 30 real tasks and the final one on 50. The baseline may spend 3,000 real steps;
 * S2R a tenth of that after its 40 dream iterations. Seconds per run on a laptop.
 */
export const START_HERE_SIZE: Partial<TrainConfig> = {
  tasksPerIteration: 2, groupSize: 4, iterations: 40, evalInterval: 4, evalEpisodes: 30, finalEvalEpisodes: 50,
  realStepBudget: 3000, s2rRealFraction: 0.1,
};

/** The experience model of the start-here dream: the shipped learned model of the env, or the noisy oracle. */
export interface StartHereEngine {
  llm: string;
  kind: 'learned' | 'oracle';
  /** How the page names it (the oracle is always named as the teaching instrument it is). */
  label: string;
}

export function startHereEngine(shippedLearned: boolean, env = START_HERE_ENV): StartHereEngine {
  if (shippedLearned) {
    return { llm: learnedSpec({ where: 'shipped', env }), kind: 'learned', label: learnedPathLabel({ where: 'shipped', env }) };
  }
  return {
    llm: START_HERE_ORACLE, kind: 'oracle',
    label: `the noisy ${llmSpecLabel(START_HERE_ORACLE)} — the real environment with dialled errors, a teaching instrument, not a learned model (this build ships no learned model for ${env})`,
  };
}

/**
 * A shorter path from the page's link (`#/start?iterations=N`, 1 to 40; anything else is ignored):
 * the same preset with fewer iterations (a quick look, and the e2e tests). The held-out evaluation
 * still runs every 4 iterations and at the last one.
 */
export function startHereSizeFromQuery(query: string): Partial<TrainConfig> {
  const raw = new URLSearchParams(query).get('iterations');
  const iterations = raw !== null && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(iterations) || iterations < 1 || iterations >= START_HERE_SIZE.iterations!) return {};
  return { iterations };
}

/** The three runs' configs: one preset, one seed, one size; the dream and S2R use the curriculum (as the CLI's default). */
export function startHereConfigs(engine: StartHereEngine, seed = 1, size: Partial<TrainConfig> = {}): TrainConfig[] {
  return START_HERE_RUNS.map((run) => validateConfig({
    ...getPreset(START_HERE_PRESET), ...START_HERE_SIZE, ...size, mode: run.mode, seed, llm: engine.llm, curriculum: run.mode !== 'real',
  } as unknown as Record<string, unknown>));
}

/** The newest group of start-here runs in the run list (the three share a createdAt), in START_HERE_RUNS order. */
export function latestGroup(runs: readonly RunEntry[]): RunEntry[] {
  const tagged = runs.filter((r) => (r.tags ?? []).includes(START_HERE_TAG));
  if (tagged.length === 0) return [];
  const newest = Math.max(...tagged.map((r) => r.createdAt));
  const group = tagged.filter((r) => r.createdAt === newest);
  return START_HERE_RUNS.map((run) => group.find((r) => r.config.mode === run.mode)).filter((r): r is RunEntry => !!r);
}

/** The run-list entries of a new group (one createdAt ties the three together). */
export function groupEntries(configs: readonly TrainConfig[], createdAt: number): RunEntry[] {
  return configs.map((config, i) => ({
    runId: `start-${config.mode}-s${config.seed}-${createdAt.toString(36)}`, query: '', config, createdAt, state: 'starting', iteration: 0,
    iterations: config.iterations, name: START_HERE_RUNS[i].name, tags: [START_HERE_TAG],
  }));
}

/** A card's iteration line: S2R's dream phase as "n of N dream", then its real iterations (Compare's long form says the rest). */
export function cardIterations(config: { mode: Mode; iterations: number }, done: number): string {
  if (config.mode !== 's2r') return `${done} of ${config.iterations}`;
  if (done <= config.iterations) return `${done} of ${config.iterations} dream`;
  return `${done} (${config.iterations} dream + ${done - config.iterations} real)`;
}

/** The page's one status line: how many runs are in each state (each card says its own iteration). */
export function groupSummary(states: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const s of states) counts.set(s, (counts.get(s) ?? 0) + 1);
  if (states.length > 0 && counts.get('finished') === states.length) return 'All three finished: compare their held-out success and the real steps each spent, below.';
  return `${[...counts].map(([state, n]) => `${n} ${state}`).join(', ')}.`;
}
