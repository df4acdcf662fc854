/**
 * The start-here path's plain logic (no Svelte, unit-tested in Node): the three DreamGym runs on
 * one tiny preset — real RL (the baseline), dream (zero real steps) and S2R (dream, then a small
 * real budget) — their configs, names and one-sentence explanations, and which experience model
 * the dream uses: the Train page's, by one rule (engine.ts dreamEngine) — Setup's pick, else the
 * learned model shipped for the environment when the build has one, else the noisy oracle,
 * labelled as such. S2R does not dream the dream again: it continues from the dream run's final
 * checkpoint (s2rNext; the trainer host's fromDream).
 */
import { getPreset, validateConfig, type Mode, type TrainConfig } from '../../../core/train/config';
import {
  DEFAULT_ORACLE_EPS,
  dreamEngine,
  type DreamEngine,
  type EngineChoice,
  type EngineFacts,
} from '../setup/engine';
import { START_HERE_TAG, type RunEntry } from '../../storage/run-list';
import type { RunState } from '../../workers/trainer/trainer-protocol';

export const START_HERE_ENV = 'webshop-lite-v0';
export const START_HERE_PRESET = 'webshop-easy';

/** The noisy oracle of the start-here dream when it is the default (the LLM demo presets were tuned with it). */
export const START_HERE_ORACLE = `oracle:${DEFAULT_ORACLE_EPS},${DEFAULT_ORACLE_EPS}`;

export interface StartHereRun {
  mode: Mode;
  name: string;
  /** What the run means, in one sentence. */
  sentence: string;
}

/**
 * The start-here size: 4 tasks × 8 rollouts per iteration, 30 iterations at learning rate 0.01, a held-out evaluation
 * every 2 iterations on 50 real tasks and the final one on 100 (and iteration 0, the untrained policy). Chosen on the
 * dev split over seeds 1-3 (docs/results/start-here.md): the smallest size tried where real RL reaches 80 % on every
 * seed (84-94 %). At the old size (12 iterations at 0.003) real RL stopped at 44-46 %, half-trained.
 */
export const START_HERE_SIZE: Partial<TrainConfig> = {
  tasksPerIteration: 4,
  groupSize: 8,
  iterations: 30,
  learningRate: 0.01,
  evalInterval: 2,
  evalEpisodes: 50,
  finalEvalEpisodes: 100,
  realStepBudget: 6000,
  s2rRealFraction: 0.1,
};

/** S2R's real budget: its share of the baseline's budget (the verdict gives its share of what the baseline spent). */
export const START_HERE_S2R_STEPS = Math.round(START_HERE_SIZE.s2rRealFraction! * START_HERE_SIZE.realStepBudget!);

const steps = (n: number) => n.toLocaleString('en-US');

export const START_HERE_RUNS: readonly StartHereRun[] = [
  {
    mode: 'real',
    name: 'Real RL (baseline)',
    sentence: `Every training step is an interaction with the real environment (up to ${steps(
      START_HERE_SIZE.realStepBudget!,
    )}): the cost DreamGym sets out to cut.`,
  },
  {
    mode: 'dream',
    name: 'Dream (0 real steps)',
    sentence:
      'The experience model dreams every next state and reward; the agent never touches the real environment while it trains.',
  },
  {
    mode: 's2r',
    name: `S2R (dream, then ${steps(START_HERE_S2R_STEPS)} real steps)`,
    sentence: `Dream first, then ${steps(
      START_HERE_S2R_STEPS,
    )} real steps: a tenth of the baseline's ${steps(START_HERE_SIZE.realStepBudget!)}-step budget.`,
  },
];

/**
 * A card's sentence. S2R's names its real budget as a share of what the baseline actually spent
 * once the baseline has spent it (its 6,000-step budget is a cap it may not reach).
 */
export function cardSentence(run: StartHereRun, baselineSpent: number | null): string {
  if (run.mode !== 's2r' || !baselineSpent) return run.sentence;
  const share = Math.round((100 * START_HERE_S2R_STEPS) / baselineSpent);
  return `Dream first, then ${steps(START_HERE_S2R_STEPS)} real steps: ${share}% of the ${steps(baselineSpent)} real RL spent.`;
}

/** The experience model of the start-here dream: the one rule's answer for its env (engine.ts dreamEngine). */
export type StartHereEngine = DreamEngine;

/** The start-here dream's engine: Setup's pick, else the learned model shipped for `env`, else the noisy oracle (engine.ts dreamEngine). */
export function startHereEngine(
  choice: EngineChoice | null,
  facts: EngineFacts,
  env = START_HERE_ENV,
): StartHereEngine {
  return dreamEngine(choice, env, facts);
}

/**
 * The page's link may shorten the path or pick another seed: `#/start?iterations=N` (1 to 11: the
 * same preset with fewer iterations, a quick look and the e2e tests; the held-out evaluation still
 * runs every 2 iterations and at the last one) and `seed=S` (0 to 1e6; the button's is 1: the
 * measurements over seeds). Anything else is ignored.
 */
export function startHereSizeFromQuery(query: string): Partial<TrainConfig> {
  const params = new URLSearchParams(query);
  const count = (name: string) => {
    const raw = params.get(name);
    return raw !== null && /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
  };
  const iterations = count('iterations'),
    seed = count('seed');
  return {
    ...(iterations >= 1 && iterations < START_HERE_SIZE.iterations! ? { iterations } : {}),
    ...(seed >= 0 && seed <= 1e6 ? { seed } : {}),
  };
}

/** The three runs' configs: one preset, one seed, one size; the dream and S2R use the curriculum (as the CLI's default). */
export function startHereConfigs(engine: StartHereEngine, seed = 1, size: Partial<TrainConfig> = {}): TrainConfig[] {
  return START_HERE_RUNS.map((run) =>
    validateConfig({
      ...getPreset(START_HERE_PRESET),
      ...START_HERE_SIZE,
      ...size,
      mode: run.mode,
      seed: size.seed ?? seed,
      llm: engine.llm,
      curriculum: run.mode !== 'real',
    } as unknown as Record<string, unknown>),
  );
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
    runId: `start-${config.mode}-s${config.seed}-${createdAt.toString(36)}`,
    query: '',
    config,
    createdAt,
    state: 'starting',
    iteration: 0,
    iterations: config.iterations,
    name: START_HERE_RUNS[i].name,
    tags: [START_HERE_TAG],
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
  if (states.length > 0 && counts.get('finished') === states.length)
    return 'All three finished: compare their held-out success and the real steps each spent, below.';
  return `${[...counts].map(([state, n]) => `${n} ${state}`).join(', ')}.`;
}

/**
 * What the S2R card does, given its dream run's state: S2R's dream phase is that dream (same
 * config and seed, core s2r-from-dream.ts), so it waits for it, then continues from its final
 * checkpoint; a dream that ended before its last iteration leaves S2R nothing to continue.
 */
export function s2rNext(dream: RunState | undefined): 'wait' | 'continue' | 'stop' {
  if (dream === 'finished') return 'continue';
  return dream === 'starting' || dream === 'running' || dream === 'paused' ? 'wait' : 'stop';
}

/** The S2R card's line while it waits. */
export const S2R_WAITS =
  "Waits for the dream: S2R continues from the dream run's final checkpoint (one dream for two cards), " +
  'then trains in the real environment.';

/** Why S2R stopped without training (s2rNext 'stop'). */
export function s2rStopped(dream: RunState | undefined): string {
  const why =
    dream === 'error'
      ? 'The dream failed before its last iteration'
      : dream === 'stopped'
        ? 'The dream was stopped before its last iteration'
        : 'The group has no dream run';
  return `${why}: S2R has no dream to continue from. Train the three again.`;
}
