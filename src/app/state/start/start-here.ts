/**
 * The start-here path's plain logic (no Svelte, unit-tested in Node): the environments it offers,
 * each with a small preset and size, and the three DreamGym runs on one of them — real RL (the
 * baseline), dream (zero real steps) and S2R (dream, then a small real budget) — their configs,
 * names and one-sentence explanations, and which experience model the dream uses: the Train
 * page's, by one rule (engine.ts dreamEngine) — Setup's pick, else the learned model shipped for
 * the environment when the build has one, else the noisy oracle, labelled as such. S2R does not
 * dream the dream again: it continues from the dream run's final checkpoint (s2rNext; the trainer
 * host's fromDream).
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
import { LAST_GROUP_KEY, START_HERE_WORK, WEBARENA_WORK, type GroupWork } from './start-here-estimate';

/** The noisy oracle of the start-here dream when it is the default (the LLM demo presets were tuned with it). */
export const START_HERE_ORACLE = `oracle:${DEFAULT_ORACLE_EPS},${DEFAULT_ORACLE_EPS}`;

export interface StartHereRun {
  mode: Mode;
  name: string;
  /** What the run means, in one sentence. */
  sentence: string;
  /** The real steps the run may spend (S2R's card gives them as a share of what the baseline spent). */
  realBudget: number;
}

/** An environment the page offers: its preset and the size chosen for it in the CLI (docs/results/start-here.md). */
export interface StartHereEnv {
  env: string;
  /** Its name on the page's choice and in the run names. */
  label: string;
  preset: string;
  size: Partial<TrainConfig>;
  /** The group's work for the time estimates, measured or scaled (start-here-estimate.ts). */
  work: GroupWork;
}

/**
 * The webshop size: 4 tasks × 8 rollouts per iteration, 30 iterations at learning rate 0.01, a held-out evaluation
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

/**
 * The mini-WebArena size: webshop's with 20 iterations, the smallest tried where real RL learns on every seed
 * (dev split, seeds 1-3, from the untrained policy's 0-4 % to 32-44 %), spending 3,600-5,700 real steps, inside the
 * same 6,000-step budget (docs/results/start-here.md, "Other environments").
 */
export const WEBARENA_SIZE: Partial<TrainConfig> = { ...START_HERE_SIZE, iterations: 20 };

/** The environments the page offers, the default (webshop) first. */
export const START_HERE_ENVS: readonly StartHereEnv[] = [
  { env: 'webshop-lite-v0', label: 'WebShop', preset: 'webshop-easy', size: START_HERE_SIZE, work: START_HERE_WORK },
  {
    env: 'webarena-lite-v0',
    label: 'mini-WebArena',
    preset: 'webarena-easy',
    size: WEBARENA_SIZE,
    work: WEBARENA_WORK,
  },
];

export const START_HERE_DEFAULT = START_HERE_ENVS[0];
export const START_HERE_ENV = START_HERE_DEFAULT.env;
export const START_HERE_PRESET = START_HERE_DEFAULT.preset;

/** The page's one line on the environment it does not offer, and why (measured: docs/results/start-here.md). */
export const START_HERE_NOT_OFFERED =
  "Household is not offered here: its dream alone took twice the CPU of WebShop's three runs (116 s against 62 s, " +
  'in the CLI), and its real RL learns nothing at this size.';

/** The offered environment `env`, or a clear error naming the ones offered. */
export function startHereEnv(env: string): StartHereEnv {
  const found = START_HERE_ENVS.find((e) => e.env === env);
  if (!found)
    throw new Error(
      `The start-here page does not offer '${env}': choose one of ${START_HERE_ENVS.map((e) => e.env).join(', ')}.`,
    );
  return found;
}

/** Where an environment's last timed group is kept (the default's under the key it always had). */
export function lastTimeKey(choice: StartHereEnv): string {
  return choice === START_HERE_DEFAULT ? LAST_GROUP_KEY : `${LAST_GROUP_KEY}.${choice.env}`;
}

const steps = (n: number) => n.toLocaleString('en-US');

/** The three runs of an environment's group: their names and sentences state its real budgets. */
export function startHereRuns(choice: StartHereEnv): StartHereRun[] {
  const budget = choice.size.realStepBudget!;
  const s2rSteps = Math.round(choice.size.s2rRealFraction! * budget);
  return [
    {
      mode: 'real',
      name: 'Real RL (baseline)',
      sentence:
        `Every training step is an interaction with the real environment (up to ${steps(budget)}): ` +
        'the cost DreamGym sets out to cut.',
      realBudget: budget,
    },
    {
      mode: 'dream',
      name: 'Dream (0 real steps)',
      sentence:
        'The experience model dreams every next state and reward; ' +
        'the agent never touches the real environment while it trains.',
      realBudget: 0,
    },
    {
      mode: 's2r',
      name: `S2R (dream, then ${steps(s2rSteps)} real steps)`,
      sentence: `Dream first, then ${steps(s2rSteps)} real steps: a tenth of the baseline's ${steps(
        budget,
      )}-step budget.`,
      realBudget: s2rSteps,
    },
  ];
}

/** S2R's real budget on the default environment: its share of the baseline's budget. */
export const START_HERE_S2R_STEPS = Math.round(START_HERE_SIZE.s2rRealFraction! * START_HERE_SIZE.realStepBudget!);

/** The default environment's three runs. */
export const START_HERE_RUNS: readonly StartHereRun[] = startHereRuns(START_HERE_DEFAULT);

/**
 * A card's sentence. S2R's names its real budget as a share of what the baseline actually spent
 * once the baseline has spent it (the baseline's budget is a cap it may not reach).
 */
export function cardSentence(run: StartHereRun, baselineSpent: number | null): string {
  if (run.mode !== 's2r' || !baselineSpent) return run.sentence;
  const share = Math.round((100 * run.realBudget) / baselineSpent);
  const spent = steps(baselineSpent);
  return `Dream first, then ${steps(run.realBudget)} real steps: ${share}% of the ${spent} real RL spent.`;
}

/** The experience model of the start-here dream: the one rule's answer for its env (engine.ts dreamEngine). */
export type StartHereEngine = DreamEngine;

/** The start-here dream's engine: Setup's pick, else the learned model shipped for `env`, else the noisy oracle (engine.ts dreamEngine). */
export function startHereEngine(
  choice: EngineChoice | null,
  facts: EngineFacts,
  env = START_HERE_DEFAULT.env,
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

/** The link's environment (`#/start?env=E`, for the measurements and the verdict's seed link); null: none offered. */
export function startHereEnvFromQuery(query: string): StartHereEnv | null {
  const env = new URLSearchParams(query).get('env');
  return START_HERE_ENVS.find((e) => e.env === env) ?? null;
}

/** The link to another seed of the same group, with S for the seed (the default environment's needs no env=). */
export function seedLink(choice: StartHereEnv): string {
  return choice === START_HERE_DEFAULT ? '#/start?seed=S' : `#/start?env=${choice.env}&seed=S`;
}

/**
 * The three runs' configs: one preset, one seed, one size; the dream and S2R use the curriculum (as the CLI's default).
 * `size` (the link's) may shorten the environment's size, never lengthen it.
 */
export function startHereConfigs(
  engine: StartHereEngine,
  seed = 1,
  size: Partial<TrainConfig> = {},
  choice: StartHereEnv = START_HERE_DEFAULT,
): TrainConfig[] {
  const iterations = Math.min(size.iterations ?? Infinity, choice.size.iterations!);
  return startHereRuns(choice).map((run) =>
    validateConfig({
      ...getPreset(choice.preset),
      ...choice.size,
      ...size,
      iterations,
      mode: run.mode,
      seed: size.seed ?? seed,
      llm: engine.llm,
      curriculum: run.mode !== 'real',
    } as unknown as Record<string, unknown>),
  );
}

/** The offered environment a group ran on (a group of an environment no longer offered: the default's). */
export function groupEnv(env: string | undefined): StartHereEnv {
  return START_HERE_ENVS.find((e) => e.env === env) ?? START_HERE_DEFAULT;
}

/** The newest group of start-here runs in the run list (the three share a createdAt), in START_HERE_RUNS order. */
export function latestGroup(runs: readonly RunEntry[]): RunEntry[] {
  const tagged = runs.filter((r) => (r.tags ?? []).includes(START_HERE_TAG));
  if (tagged.length === 0) return [];
  const newest = Math.max(...tagged.map((r) => r.createdAt));
  const group = tagged.filter((r) => r.createdAt === newest);
  return START_HERE_RUNS.map((run) => group.find((r) => r.config.mode === run.mode)).filter((r): r is RunEntry => !!r);
}

/**
 * The run-list entries of a new group (one createdAt ties the three together). Another environment's runs name it, so
 * that Compare and the Train page's list tell two groups apart.
 */
export function groupEntries(configs: readonly TrainConfig[], createdAt: number): RunEntry[] {
  const choice = groupEnv(configs[0]?.env);
  const runs = startHereRuns(choice);
  return configs.map((config, i) => ({
    runId: `start-${config.mode}-s${config.seed}-${createdAt.toString(36)}`,
    query: '',
    config,
    createdAt,
    state: 'starting',
    iteration: 0,
    iterations: config.iterations,
    name: choice === START_HERE_DEFAULT ? runs[i].name : `${runs[i].name} · ${choice.label}`,
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
