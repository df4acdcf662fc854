/**
 * The three kinds of job a table is made of: a baseline policy's evaluation (random, expert), the
 * SFT policy's, and one training run (a fresh Trainer, trained to the end, evaluated, disposed).
 * Each job carries its key (what fixes its outcome: the CLI's job cache files outcomes under it,
 * so a key's text must not change for the same job) and a relative cost for scheduling.
 */
import { makeBaselinePolicy, rolloutEpisode } from '../data/rollout';
import { getEnvDefinition, makeEnv } from '../envs/registry';
import { CandidatePolicy } from '../policy/policy';
import { validateConfig, type TrainConfig } from '../train/config';
import { evaluatePolicy, heldOutSeed, type EvalResult, type EvalSplit } from '../train/evaluate';
import { Trainer } from '../train/loop';
import { rolloutSuccess } from '../train/metrics';
import { envPolicyFeatures, registeredEnvSchema } from '../train/policy-schema';
import { buildRunParts } from '../train/run-parts';
import { behaviourCloning, DEFAULT_SFT_CONFIG, sftExamples } from '../train/sft';
import type { Context } from './runner';
import { ExperimentError, type Job, type JobOutcome } from './types';

/** The random or expert policy on the held-out tasks (of a split) a trained policy is evaluated on. */
export async function evaluateBaseline(
  name: 'random' | 'expert',
  envId: string,
  difficulty: number,
  episodes: number,
  seed: number,
  split: EvalSplit = 'dev',
): Promise<EvalResult> {
  const definition = getEnvDefinition(envId);
  const env = makeEnv(envId);
  const policy = makeBaselinePolicy(name);
  let successes = 0,
    score = 0,
    steps = 0;
  for (let i = 0; i < episodes; i++) {
    const taskSeed = heldOutSeed(split, i);
    const t = await rolloutEpisode(env, policy, {
      seed: taskSeed + seed * 7919,
      task: definition.generateTask(taskSeed, difficulty),
    });
    if (t.result.success) successes++;
    score += t.result.score;
    steps += t.result.steps;
  }
  return { split, success: successes / episodes, score: score / episodes, episodes, meanSteps: steps / episodes };
}

/** The outcome of a row that takes no env steps (random, expert, SFT): its evaluation only. */
function untrainedOutcome(r: { success: number; score: number }, split: EvalSplit, wallSeconds: number) {
  return { split, success: r.success, score: r.score, realSteps: 0, dreamSteps: 0, wallSeconds };
}

/** Relative cost of training with `config` (rollout steps at the step limit; dreaming costs about twice a real step). */
function trainCost(config: TrainConfig, split: EvalSplit): number {
  const stepLimit = getEnvDefinition(config.env).defaultStepLimit;
  const rollouts = config.iterations * config.tasksPerIteration * config.groupSize * stepLimit;
  const factor = config.mode === 'real' ? 1 : config.mode === 'dream' ? 2 : 2 + config.s2rRealFraction;
  const evaluations = split === 'dev' ? 1 : 2; // the run's own (dev), then the test split's
  return rollouts * factor + evaluations * config.finalEvalEpisodes * stepLimit;
}

export function baselineJob(
  ctx: Context,
  name: 'random' | 'expert',
  config: TrainConfig,
  seed: number,
  split: EvalSplit,
): Job {
  return {
    label: `${config.env} ${name} policy seed ${seed}`,
    key: jobKey('baseline', {
      name,
      env: config.env,
      difficulty: config.difficulty,
      seed,
      split,
      episodes: config.finalEvalEpisodes,
    }),
    cost: config.finalEvalEpisodes * getEnvDefinition(config.env).defaultStepLimit,
    async run() {
      const started = ctx.now();
      const r = await evaluateBaseline(name, config.env, config.difficulty, config.finalEvalEpisodes, seed, split);
      return untrainedOutcome(r, split, (ctx.now() - started) / 1000);
    },
  };
}

/**
 * Behaviour cloning of `policy` on the env's offline expert episodes (sft.ts): the SFT row, and the
 * start of the SFT-then-dream row (its trainer's policy, the same initial weights as the SFT row's).
 */
async function cloneExpert(ctx: Context, policy: CandidatePolicy, config: TrainConfig, epochs: number): Promise<void> {
  const data = await ctx.dataset(config.env);
  if (!data?.length)
    throw new ExperimentError(
      `The SFT rows clone the offline dataset of ${config.env}, and none was handed in: ` +
        'give ExperimentDeps.loadDataset.',
    );
  const stepLimit = getEnvDefinition(config.env).defaultStepLimit;
  const sft = { ...DEFAULT_SFT_CONFIG, epochs, stepLimit, seed: config.seed };
  await behaviourCloning(policy, sftExamples(data, sft.sources, stepLimit), sft);
}

/** The SFT baseline: the policy cloned from the expert episodes, no RL, evaluated as every row is. */
export function sftJob(ctx: Context, config: TrainConfig, split: EvalSplit, epochs: number): Job {
  return {
    label: `${config.env} SFT (behaviour cloning) seed ${config.seed}`,
    key: jobKey('sft', { config, split, epochs }),
    cost: 2 * config.finalEvalEpisodes * getEnvDefinition(config.env).defaultStepLimit,
    async run() {
      const started = ctx.now();
      // The initial policy of every row's trainer: the same mined schema and env features (loop.ts).
      const schema = await registeredEnvSchema(config.env);
      const policy = new CandidatePolicy({ seed: config.seed, schema }, undefined, envPolicyFeatures(config.env));
      try {
        await cloneExpert(ctx, policy, config, epochs);
        const r = await evaluatePolicy(policy, config.env, config.difficulty, config.finalEvalEpisodes, { split });
        return untrainedOutcome(r, split, (ctx.now() - started) / 1000);
      } finally {
        policy.dispose();
      }
    },
  };
}

/**
 * The final evaluation of a trained policy on a split. Dev: the one the run made after its last
 * iteration. Test: a fresh one on the test tasks, made only here, after training is over.
 */
async function finalEvaluation(trainer: Trainer, config: TrainConfig, split: EvalSplit): Promise<EvalResult> {
  // The last iteration evaluated the final policy on finalEvalEpisodes dev tasks.
  if (split === 'dev') return trainer.finalEvaluation?.result ?? (await trainer.evaluate(config.finalEvalEpisodes));
  return trainer.source.evaluate(trainer.policy, config.finalEvalEpisodes, split);
}

/** One training run: a fresh Trainer (and buffer for dream/s2r), trained to the end, evaluated, disposed. */
export function trainJob(
  ctx: Context,
  label: string,
  config: TrainConfig,
  split: EvalSplit,
  evalElsewhere: TrainConfig[] = [],
  /** Epochs of behaviour cloning the policy starts from (SFT, then dream); null: the untrained policy. */
  sftEpochs: number | null = null,
): Job {
  return {
    label,
    key: jobKey('train', {
      config,
      split,
      sftEpochs,
      elsewhere: evalElsewhere.map((t) => [t.env, t.difficulty, t.finalEvalEpisodes]),
    }),
    cost:
      trainCost(config, split) +
      evalElsewhere.reduce((a, t) => a + t.finalEvalEpisodes * getEnvDefinition(t.env).defaultStepLimit, 0),
    ...(config.mode !== 'real' ? { llm: config.llm } : {}),
    async run(report) {
      const started = ctx.now();
      const valid = validateConfig({ ...config });
      const dreams = valid.mode !== 'real';
      const buffer = dreams ? await ctx.freshBuffer(valid.env) : undefined;
      const parts = await buildRunParts(valid, { ...ctx.deps.engine, ...(buffer ? { buffer } : {}) });
      const trainer = new Trainer(valid, { ...parts, ...(buffer ? { buffer, now: () => ctx.now() } : {}) });
      try {
        if (sftEpochs !== null) await cloneExpert(ctx, trainer.policy, valid, sftEpochs);
        const invalid: number[] = [];
        let dreamPhase: JobOutcome['dreamPhase'];
        while (!trainer.finished) {
          const record = await trainer.runIteration();
          const rate = record.metrics['dream/invalid_rate'];
          if (typeof rate === 'number') invalid.push(rate);
          report({
            iteration: record.iteration,
            iterations: Math.max(record.iteration, valid.iterations),
            phase: trainer.phaseOf(record.iteration),
            success: rolloutSuccess(record.metrics)?.value ?? null,
            realSteps: trainer.realSteps,
            dreamSteps: trainer.dreamSteps,
          });
          if (valid.mode === 's2r' && record.iteration === valid.iterations) {
            const atSwitch = await trainer.source.evaluate(trainer.policy, valid.finalEvalEpisodes, split);
            dreamPhase = phaseOutcome(atSwitch, trainer, split, (ctx.now() - started) / 1000, invalid);
          }
        }
        const evaluation = await finalEvaluation(trainer, valid, split);
        const elsewhere: Record<string, EvalResult> = {};
        for (const target of evalElsewhere) {
          elsewhere[target.env] = await evaluatePolicy(
            trainer.policy,
            target.env,
            target.difficulty,
            target.finalEvalEpisodes,
            { split },
          );
        }
        return {
          split,
          success: evaluation.success,
          score: evaluation.score,
          realSteps: trainer.realSteps,
          dreamSteps: trainer.dreamSteps,
          wallSeconds: (ctx.now() - started) / 1000,
          ...(dreams ? { invalidRate: meanOr0(invalid) } : {}),
          ...(evalElsewhere.length ? { elsewhere } : {}),
          ...(dreamPhase ? { dreamPhase } : {}),
        };
      } finally {
        trainer.dispose();
        parts.experienceModel?.dispose?.();
        await buffer?.store.close();
      }
    },
  };
}

const meanOr0 = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** The outcome of an S2R run's dream phase: its evaluation at the switch, 0 real steps so far. */
function phaseOutcome(
  evaluation: EvalResult,
  trainer: Trainer,
  split: EvalSplit,
  wallSeconds: number,
  invalid: number[],
): NonNullable<JobOutcome['dreamPhase']> {
  const { success, score } = evaluation;
  const { realSteps, dreamSteps } = trainer;
  return { split, success, score, realSteps, dreamSteps, wallSeconds, invalidRate: meanOr0(invalid) };
}

/** A job's identity as stable JSON (a config's keys sorted, so equal settings give equal keys). */
function jobKey(kind: string, parts: Record<string, unknown>): string {
  const sorted = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
        )
      : Array.isArray(v)
        ? v.map(sorted)
        : v;
  return JSON.stringify(sorted({ job: kind, ...parts }));
}
