/**
 * DreamEnv: the Env contract (docs/architecture.md §3.2) over an ExperienceModel, so a trainer never knows
 * whether it is dreaming. Retrieval of examples happens inside the model (it owns the buffer).
 *
 * reset({seed, task, start}): with `start`, the episode begins at that recorded state of the task,
 *   its recorded steps as the history (dreams that start from real states, real-starts.ts).
 * reset({seed, task}): a task of a real env starts from the real env's first observation (a
 *   ground-truth start page, as in the paper: dreams start from real initial states); a task the
 *   real env cannot play (imported domains, LLM-written tasks) starts from `model.initial(task)`.
 *   Without a task, the real env generates one from the seed (or `taskForSeed` for imported envs).
 * step(action):
 *   - an action not in the current admissible list, or any action after the episode ended, is a
 *     no-op with `info.valid: false` and reward 0 — exactly as the real envs do; the model is not
 *     asked;
 *   - otherwise the model predicts the next state. If it judges the action impossible
 *     (`actionValid: false`) the step is the same no-op;
 *   - if its ANSWER is unusable after its retries (`Prediction.valid: false`), the step is marked
 *     `info.dream.invalid: true` (with `info.valid: false`, `info.dream.invalidReason`): the
 *     previous observation is kept, reward 0, not terminated. The trainer keeps such steps for
 *     inspection but excludes them from learning (docs/architecture.md §4.3). An engine call that failed in
 *     transport is such a step too, with `info.dream.engineError` (the caller counts those).
 * A dreamed state offers what the model wrote: no domain's rule filters it (what the data never
 * shows is the halt's to catch, halting-model.ts).
 * The step limit is TimeLimit's job, as for real envs (`makeDreamEnv` wraps it).
 *
 * Accounting: every step's `info.dream` (asked or not, reasoning, tokens, cache hit, invalid
 * answer, and the question and answer themselves: prompt, raw text, each try) is what a trainer reads; `lastPrediction` (raw answer, attempts) and the cumulative
 * `usage` are for inspection and summaries.
 *
 * Concurrency: one DreamEnv plays one episode, one step at a time; many DreamEnvs share one model
 * and step together (the rollout awaits all episodes' steps at once), so the model may receive
 * concurrent `next` calls. Models keep results independent of the order calls complete in.
 */
import { TimeLimit, type Env, type EnvCreateOptions, type RecordedStart, type ResetOptions } from '../envs/env';
import { getEnvDefinition, listEnvDefinitions } from '../envs/registry';
import type { DreamAnswer, DreamStepReport, Observation, Step, StepInfo, StepResult, Task } from '../types';
import { predictedOutcome, type ExperienceModel, type Prediction } from './types';

export interface DreamEnvOptions {
  /** The env id the dream plays under (tasks and observations carry it). */
  envId: string;
  /** Difficulty of tasks generated from a seed (real envs; default the env's default). */
  difficulty?: number;
  /** Options of the real env used for start pages and seeded tasks. */
  createOptions?: EnvCreateOptions;
  /** Tasks for `reset({seed})` without a task, for envs the registry does not know. */
  taskForSeed?: (seed: number) => Task;
  /** Cancels pending model calls. */
  signal?: AbortSignal;
}

/** A dreamed step's info: always with the experience model's account (`dream`). */
export interface DreamStepInfo extends StepInfo {
  dream: DreamStepReport;
}

export interface DreamStepResult extends StepResult {
  info: DreamStepInfo;
}

export interface DreamUsage {
  /** Steps taken (no-ops included). */
  steps: number;
  /** Predictions asked of the model (cache hits included). */
  predictions: number;
  cacheHits: number;
  /** Predictions whose answer was unusable (`info.dream.invalid` steps). */
  invalid: number;
  promptTokens: number;
  completionTokens: number;
  ms: number;
}

function emptyUsage(): DreamUsage {
  return { steps: 0, predictions: 0, cacheHits: 0, invalid: 0, promptTokens: 0, completionTokens: 0, ms: 0 };
}

export class DreamEnv implements Env {
  readonly id: string;
  /** The model's last prediction (null before the first asked step of an episode). */
  lastPrediction: Prediction | null = null;
  /** Cumulative over the env's lifetime (`resetUsage()` to start over). */
  usage: DreamUsage = emptyUsage();
  private task: Task | null = null;
  private state: Observation | null = null;
  private steps: Step[] = [];
  private ended = false;
  private succeeded = false;
  private readonly initialCache = new Map<string, Observation>();

  constructor(
    readonly model: ExperienceModel,
    readonly options: DreamEnvOptions,
  ) {
    this.id = options.envId;
  }

  get currentTask(): Task | null {
    return this.task;
  }

  /** The steps of the current episode (no-ops included), oldest first. */
  get history(): readonly Step[] {
    return this.steps;
  }

  resetUsage(): void {
    this.usage = emptyUsage();
  }

  private realDefinition(envId: string) {
    return listEnvDefinitions().some((d) => d.id === envId) ? getEnvDefinition(envId) : null;
  }

  async reset(opts: ResetOptions): Promise<Observation> {
    if (!opts || !Number.isFinite(opts.seed)) throw new RangeError('DreamEnv: reset needs { seed: number, task? }');
    if (opts.start) return this.resetAt(opts.start, opts.task);
    const definition = this.realDefinition(this.id);
    let task = opts.task;
    let first: Observation | null = null;
    if (!task) {
      if (definition) {
        first = await definition
          .create({
            ...this.options.createOptions,
            ...(this.options.difficulty !== undefined ? { difficulty: this.options.difficulty } : {}),
          })
          .reset({ seed: opts.seed });
        task = first.task;
      } else if (this.options.taskForSeed) {
        task = this.options.taskForSeed(opts.seed);
      } else {
        throw new Error(
          `DreamEnv '${this.id}': reset({seed}) needs a task — the registry cannot generate tasks for this env; pass { task } or the taskForSeed option.`,
        );
      }
    }
    if (!first) first = await this.startOf(task, opts.seed);
    this.task = task;
    this.state = { text: first.text, admissible: first.admissible.slice(), task };
    this.steps = [];
    this.ended = false;
    this.succeeded = false;
    this.lastPrediction = null;
    return { ...this.state, admissible: this.state.admissible.slice() };
  }

  /** Begins at a recorded state of `task`, its recorded steps as the history the model sees. */
  private resetAt(start: RecordedStart, task: Task | undefined): Observation {
    if (!task) throw new RangeError('DreamEnv: a reset at a recorded state needs the task it was recorded in');
    this.task = task;
    this.state = { text: start.state.text, admissible: start.state.admissible.slice(), task };
    this.steps = start.history.map((s) => ({ ...s, admissible: s.admissible.slice() }));
    this.ended = false;
    this.succeeded = false;
    this.lastPrediction = null;
    return { ...this.state, admissible: this.state.admissible.slice() };
  }

  /** The real start page when a real env can play the task, else the model's (cached per task). */
  private async startOf(task: Task, seed: number): Promise<Observation> {
    const definition = this.realDefinition(task.env);
    if (definition) {
      try {
        return await definition.create(this.options.createOptions).reset({ seed: task.seed ?? seed, task });
      } catch {
        // Not a task the real env can rebuild (no spec): the model writes the start page.
      }
    }
    const key = `${task.id}\u0000${task.instruction}`;
    let first = this.initialCache.get(key);
    if (!first) {
      first = await this.model.initial(task, this.options.signal);
      this.initialCache.set(key, first);
    }
    return first;
  }

  async step(action: string): Promise<DreamStepResult> {
    const state = this.state;
    const task = this.task;
    if (!state || !task) throw new Error('DreamEnv: call reset() before step()');
    this.usage.steps++;
    const stepNumber = this.steps.length + 1;
    if (this.ended || typeof action !== 'string' || !state.admissible.includes(action)) {
      return this.noop(state, action, stepNumber, {
        predicted: false,
        reasoning: '',
        tokens: 0,
        cached: false,
        invalid: false,
      });
    }
    const prediction = await this.model.next({ task, history: this.steps, state, action, signal: this.options.signal });
    this.lastPrediction = prediction;
    this.usage.predictions++;
    if (prediction.cached) this.usage.cacheHits++;
    this.usage.promptTokens += prediction.usage.promptTokens;
    this.usage.completionTokens += prediction.usage.completionTokens;
    this.usage.ms += prediction.usage.ms;
    const answer = answerOf(prediction);
    const report: DreamStepReport = {
      predicted: true,
      reasoning: prediction.reasoning,
      tokens: prediction.usage.promptTokens + prediction.usage.completionTokens,
      cached: prediction.cached === true,
      invalid: false,
      ...(answer ? { answer } : {}),
      ...(prediction.disagreement !== undefined ? { disagreement: prediction.disagreement } : {}),
      ...(prediction.novelty !== undefined ? { novelty: prediction.novelty } : {}),
      ...(prediction.halted ? { halted: true } : {}),
      ...(prediction.redraws ? { redraws: prediction.redraws } : {}),
    };

    const running = !prediction.terminated;
    const unusable =
      !prediction.valid ||
      (prediction.actionValid && running && prediction.next.admissible.length === 0) ||
      (prediction.actionValid && prediction.next.text.length === 0);
    if (unusable) {
      this.usage.invalid++;
      return this.noop(state, action, stepNumber, {
        ...report,
        invalid: true,
        invalidReason: prediction.invalidReason ?? 'the predicted state is empty',
        ...(prediction.engineError !== undefined ? { engineError: prediction.engineError } : {}),
      });
    }
    if (!prediction.actionValid) return this.noop(state, action, stepNumber, report);
    const terminated = prediction.terminated;
    const success = terminated && predictedOutcome(prediction) === 1;
    const next: Observation = {
      text: prediction.next.text,
      admissible: terminated ? [] : prediction.next.admissible.slice(),
      task,
    };
    this.steps.push({
      observation: state.text,
      admissible: state.admissible,
      action,
      reward: prediction.reward,
      terminated,
      truncated: false,
      valid: true,
    });
    this.state = next;
    if (terminated) {
      this.ended = true;
      this.succeeded = success;
    }
    return {
      ...next,
      admissible: next.admissible.slice(),
      reward: prediction.reward,
      terminated,
      truncated: false,
      info: {
        valid: true,
        success,
        ...(prediction.score !== undefined ? { score: prediction.score } : {}),
        steps: stepNumber,
        dream: report,
      },
    };
  }

  private noop(state: Observation, action: string, stepNumber: number, dream: DreamStepReport): DreamStepResult {
    this.steps.push({
      observation: state.text,
      admissible: state.admissible,
      action: String(action),
      reward: 0,
      terminated: false,
      truncated: false,
      valid: false,
    });
    return {
      text: state.text,
      admissible: state.admissible.slice(),
      task: state.task,
      reward: 0,
      terminated: this.ended,
      truncated: false,
      info: { valid: false, success: this.succeeded, score: this.succeeded ? 1 : 0, steps: stepNumber, dream },
    };
  }
}

/** What the model was asked and answered, for inspection (none for a model without answer text: the oracle). */
function answerOf(p: Prediction): DreamAnswer | undefined {
  if (p.raw === undefined && !p.prompt && !p.tries?.length) return undefined;
  return {
    ...(p.prompt ? { prompt: p.prompt.map((m) => ({ role: m.role, content: m.content })) } : {}),
    ...(p.raw !== undefined ? { raw: p.raw } : {}),
    ...(p.tries?.length ? { tries: p.tries.map((t) => ({ ...t, usage: { ...t.usage } })) } : {}),
    usage: { ...p.usage },
  };
}

/** A DreamEnv under the env's step limit (TimeLimit), like `makeEnv` for real envs. */
export function makeDreamEnv(
  model: ExperienceModel,
  options: DreamEnvOptions & { stepLimit?: number },
): TimeLimit<DreamEnv> {
  const { stepLimit, ...rest } = options;
  const definition = listEnvDefinitions().find((d) => d.id === options.envId);
  const limit = stepLimit ?? definition?.defaultStepLimit;
  if (limit === undefined)
    throw new Error(`makeDreamEnv: '${options.envId}' is not a registered env; give its stepLimit.`);
  return new TimeLimit(new DreamEnv(model, rest), limit);
}
