/**
 * The learned experience model: start reading here. It is the paper's M_exp as a small network
 * trained here (the `learned:PATH` engine), behind the ExperienceModel contract (../types.ts), so
 * DreamEnv, the audit, the trainer, the page and the CLI use it unchanged.
 *
 * One dreamed transition, in the order this file reads (`next`, then its sections):
 *
 *   DreamEnv.step (../dream-env.ts) asks `next({ task, history, state, action })`.
 *   1. context   what an experience model may see, as tokens (format.ts `encodeContext`, tokenizer.ts):
 *                the instruction, k retrieved REAL transitions, the last H actions, the abstract state
 *                (the domain card's abstraction, ../domain-card.ts) and the action. Never `task.spec`.
 *   2. network   a small encoder–decoder with a copy pointer (network.ts): the encoder reads the context
 *                once; the decoder writes the answer a token at a time, each token a vocabulary word or
 *                a copy of a context token.
 *   3. decoding  the answer grammar (format.ts `RowGrammar`) fixes the structure (valid, terminated,
 *                reward, the next state, its actions) and the network writes the contents (decode.ts).
 *                The answer is read back (format.ts `decodeAnswer`), rendered into the env's own text
 *                and checked (../domain-card.ts `checkConsistency`): a rejected answer is an invalid
 *                prediction (never learned from), with its reason and the decoded text in `raw`.
 *   4. verdict   on an ending, the verdict head (verdict.ts) gives the reward instead of the network's
 *                own reward token; a goal head decides before decoding whether the step ends at all.
 *   DreamEnv turns the Prediction into the next observation, `terminated` and the reward.
 *
 * The files on that path, in order (docs/architecture.md §5.3):
 *   ../dream-env.ts      DreamEnv.step: asks the model, turns its Prediction into a StepResult
 *   learned-model.ts     this file: the transition, top to bottom
 *   format.ts            the context's tokens, the answer's grammar, the answer read back
 *   tokenizer.ts         text ↔ tokens: words with their spacing and case, placeholders for new ids
 *   network.ts           the network: the sums every decoding engine runs
 *   decode.ts            decoding: the engine, the choice of each token, the decoding loops
 *   verdict.ts           the verdict heads: the reward of an ending
 *   ../domain-card.ts    abstract ↔ concrete states, and the rules a next state keeps
 * Off the path: the contract (../types.ts); the engines' insides, which compute network.ts's sums
 * faster (fused-network.ts on kernels/, decode-cache.ts in tfjs); decoder threads (decode-service.ts);
 * retrieval (the buffer; none for the shipped k = 0 model); loading (model-file.ts, weights.ts);
 * training (train-model.ts, fit.ts, sft-data.ts, time-left.ts).
 *
 * - Concurrent `next` calls (one rollout step's episodes, awaited together) are coalesced: the
 *   calls of one turn of the event loop become one batch, decoded with a KV cache. Identical
 *   requests in a batch are decoded once. A row's answer depends only on its own context, so the
 *   same seed gives the same dream at any batch size.
 * - A transition cache answers repeated (task, history, state, action) at once, counted as cache
 *   hits.
 */
import type { ReplayBuffer } from '../../buffer/buffer';
import type { Observation, Task, Transition } from '../../types';
import {
  bound,
  checkConsistency,
  concreteAdmissible,
  concreteObservation,
  globalActionsOf,
  type DomainCard,
} from '../domain-card';
import {
  ExperienceModelError,
  type DreamContext,
  type DreamCorrection,
  type ExperienceModel,
  type Prediction,
} from '../types';
import { Decoder, type Decoded, type DecoderKind, type Sampling } from './decode';
import {
  decodeAnswer,
  decodeLimits,
  decodeState,
  encodeContext,
  encodeInitialContext,
  encodePrompt,
  freshNames,
  shownSteps,
  type AnswerKind,
  type DecodeLimits,
  type FormatOptions,
  type Sequence,
} from './format';
import type { ModelManifest } from './model-file';
import { ExperienceNetwork, type NamedWeight } from './network';
import { Tokenizer, type Tokens } from './tokenizer';
import { realEpisodes, splitByTask, type RecordedEpisode } from './sft-data';
import { learnedTrainOptions } from './train-model';
import { fitHeadFor, judgeStep, verdictKind, type Judgement, type VerdictHead, type VerdictInput } from './verdict';

/** A verdict head's p(success) of a step, the features it read, and its members' disagreement. */
type Judged = Judgement;

/** Decodes one batch somewhere else (a worker thread with its own copy of the network). */
export type BatchDecoder = (batch: {
  contexts: Sequence[];
  prompts: Tokens[];
  kinds: AnswerKind[];
  sampling: Sampling;
}) => Promise<Decoded[]>;

export interface LearnedModelOptions {
  /**
   * Decoders in other threads: a batch is split among them (rows are independent, so the answers
   * are the same as decoding here). Absent: this thread decodes.
   */
  decoders?: readonly BatchDecoder[];
  /** Where retrieved examples come from (real transitions only). None: no examples. */
  buffer?: ReplayBuffer;
  /** Examples and history shown; at most what the model was trained with (default: that). */
  k?: number;
  historyLength?: number;
  /** The decoding engine (default 'fused'; 'tfjs' is the reference it is tested against). */
  decoder?: DecoderKind;
  /** Most rows decoded together (default 64). */
  maxBatch?: number;
  /** Repeated requests answered from a cache (default on). */
  transitionCache?: boolean;
  cacheSize?: number;
  /** Milliseconds, for the usage figures (default performance.now). */
  now?: () => number;
  /**
   * Temperature of the written contents (default 0.7; 0 = greedy). A world model samples its next
   * state: greedy decoding always writes the most likely one (every room holds the object the task
   * asks for, as in the expert demonstrations). The verdicts are always the most likely. Draws come
   * from a stream of (seed, the request's own context), so the same seed gives the same dream.
   */
  temperature?: number;
  seed?: number;
  /** Judge an episode's end with the model's verdict head, where it has one (default true; false: the generator's reward). */
  verdictHead?: boolean;
  /**
   * The reward of an ending the verdict head judges: 'expected' (default) its p(success), the
   * outcome it expects, graded as an env's own graded reward is (with `success` = p ≥ 0.5); 'outcome'
   * the thresholded 0 or 1.
   */
  verdictReward?: 'expected' | 'outcome';
  /**
   * How the verdict ensemble's members combine: absent, their minimum (a success pays only where
   * every member grants it); a number λ, their mean − λ·std.
   */
  verdictLambda?: number;
  /** The verdict ensemble's members used: the first N of those stored (default all; 1 = no ensemble). */
  verdictMembers?: number;
  /** Called once on dispose (e.g. to stop the decoder threads). */
  release?: () => void;
  /**
   * A state's candidate actions, inferred from the domain's recorded episodes as its import and a
   * deployed agent infer them: required for a model of a domain whose lists are inferred
   * (DomainCard.inferredAdmissible), which writes none.
   */
  inferAdmissible?: InferAdmissible;
}

/** Candidates of a state of an application that lists none (src/core/data/candidates.ts `inferCandidates`). */
export type InferAdmissible = (state: {
  instruction: string;
  observation: string;
  previousAction?: string;
}) => string[];

/** The reward (and outcome) a verdict gives a step, and how far its ensemble's members were apart. */
type Verdict = { reward: number; success?: boolean; disagreement?: number };

/** Each member's p, and their spread, for a note. */
function memberText(judged: Judged): string {
  return `${judged.members.map((p) => p.toFixed(2)).join('/')} (disagreement ${judged.disagreement.toFixed(3)})`;
}

/** One decoded request: the answer read back, its raw text with markers, and what it cost. */
interface Decoding {
  text: ReturnType<typeof decodeAnswer> | ReturnType<typeof decodeState>;
  raw: string;
  promptTokens: number;
  completionTokens: number;
  ms: number;
  /** Why nothing could be decoded (the batch failed). */
  error?: string;
  /** An identical request of the same batch was decoded for it (a cache hit in all but name). */
  shared?: boolean;
}

interface Pending {
  kind: AnswerKind;
  key: string;
  build: () => Promise<Sequence>;
  prompt: Tokens;
  resolve: (result: Decoding) => void;
}

export interface LearnedModelStats {
  batches: number;
  rows: number;
  decodedRows: number;
  cacheHits: number;
}

export class LearnedExperienceModel implements ExperienceModel {
  readonly label: string;
  readonly format: FormatOptions;
  readonly preferredBatch: number;
  /** The retrieved transitions a context holds: the run's k, at most the k the model was trained with. */
  get retrievalK(): number {
    return this.format.k;
  }
  readonly temperature: number;
  readonly stats: LearnedModelStats = { batches: 0, rows: 0, decodedRows: 0, cacheHits: 0 };
  private readonly decoder: Decoder;
  private readonly limits: DecodeLimits;
  private readonly cache = new Map<string, Prediction>();
  private verdict: VerdictHead | null;
  /** The real episodes the verdict was fitted on (read from the run's buffer at the first correction). */
  private verdictData: RecordedEpisode[] | null = null;
  /** Real replays of the dream's claimed successes, oldest first (correct). */
  private readonly corrections: RecordedEpisode[] = [];
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;

  constructor(
    readonly net: ExperienceNetwork,
    readonly tokenizer: Tokenizer,
    readonly card: DomainCard,
    readonly manifest: Pick<ModelManifest, 'name' | 'env' | 'formatOptions' | 'verdict'> &
      Partial<Pick<ModelManifest, 'training'>>,
    readonly options: LearnedModelOptions = {},
  ) {
    const trained = manifest.formatOptions;
    if (trained.freshIds && tokenizer.freshIdTokens.length < trained.freshIds.count) {
      throw new Error(
        `The learned model '${manifest.name}' writes ${trained.freshIds.count} fresh-id placeholders but its tokenizer has ${tokenizer.freshIdTokens.length}: the model files do not belong together. Train the model again.`,
      );
    }
    this.format = {
      ...trained,
      k: Math.min(options.k ?? trained.k, trained.k),
      historyLength: Math.min(options.historyLength ?? trained.historyLength, trained.historyLength),
    };
    if (card.inferredAdmissible && !options.inferAdmissible) {
      throw new Error(
        `The learned model '${manifest.name}' writes no admissible lists: its domain recorded none, and a dreamed ` +
          "state's candidates are inferred from the domain's episodes. Dream with the domain (domain train, or the " +
          'Domains page), which hands them over.',
      );
    }
    this.limits = decodeLimits(trained);
    this.decoder = new Decoder(
      net,
      tokenizer,
      this.limits,
      options.decoder ?? 'fused',
      Math.max(2, options.maxBatch ?? 64),
    );
    this.temperature = Math.max(0, options.temperature ?? 0.7);
    const head = options.verdictHead === false ? null : (manifest.verdict ?? null);
    const members = Math.max(1, options.verdictMembers ?? Infinity);
    this.verdict = head && { ...head, members: head.members.slice(0, members) };
    const kind = this.verdict && (verdictKind(this.verdict) === 'goal' ? 'goal head' : 'verdict head');
    const ensemble = this.verdict && this.verdict.members.length > 1 ? ` ×${this.verdict.members.length}` : '';
    const judged = kind ? `, ${kind}${ensemble}` : '';
    const sampled = this.temperature > 0 ? `, T=${this.temperature}` : '';
    this.label = `learned ${manifest.name} (k=${this.format.k}, H=${this.format.historyLength}${sampled}${judged})`;
    this.preferredBatch = Math.max(1, options.maxBatch ?? 64);
  }

  /** A model from checked files (model-file.ts). */
  static fromFiles(
    manifest: ModelManifest,
    weights: readonly NamedWeight[],
    options: LearnedModelOptions = {},
  ): LearnedExperienceModel {
    const net = ExperienceNetwork.fromWeights(manifest.network, weights);
    return new LearnedExperienceModel(net, Tokenizer.fromJSON(manifest.tokenizer), manifest.card, manifest, options);
  }

  // ---- one transition: context → network → decoding → verdict ---------------------------------------

  /** One dreamed step: answered from the cache, or its context decoded in this turn's batch, read back and judged. */
  async next(ctx: DreamContext): Promise<Prediction> {
    const key = this.cacheKey(ctx);
    const cached = this.options.transitionCache === false ? undefined : this.cache.get(key);
    if (cached) {
      this.stats.cacheHits++;
      return {
        ...cached,
        next: { ...cached.next, admissible: cached.next.admissible.slice() },
        usage: { promptTokens: 0, completionTokens: 0, ms: 0 },
        attempts: 0,
        notes: [],
        cached: true,
      };
    }
    // 4, early: a goal head decides before decoding whether this step ends the episode.
    const goal = this.goalVerdict(ctx);
    const kind = goal === null ? 'next' : goal.p >= 0.5 ? 'next-ending' : 'next-running';
    // 1. The context, built when this turn's batch is decoded (2–3).
    const result = await this.enqueue(kind, key, encodePrompt(this.tokenizer, ctx.action), async () => {
      const input = { task: ctx.task, history: ctx.history, state: ctx.state, action: ctx.action };
      const context = encodeContext(
        this.tokenizer,
        this.card,
        { ...input, retrieved: await this.retrieve(ctx) },
        this.format,
      );
      return ctx.draw ? { ...context, draw: ctx.draw } : context;
    });
    // 3–4. The answer read back, checked, and judged where it ends the episode.
    const prediction = this.toPrediction(ctx, result, goal);
    if (prediction.valid && this.options.transitionCache !== false) {
      this.cache.set(key, prediction);
      if (this.cache.size > (this.options.cacheSize ?? 20_000))
        this.cache.delete(this.cache.keys().next().value as string);
    }
    return prediction;
  }

  // ---- 1. context: what the model may see, as tokens ------------------------------------------------

  /** The transition cache's key: everything the answer depends on. */
  private cacheKey(ctx: DreamContext): string {
    return JSON.stringify([
      ctx.task.env,
      ctx.task.instruction,
      ctx.history.map((s) => (s.valid ? s.action : `!${s.action}`)),
      ctx.state.text,
      ctx.state.admissible,
      ctx.action,
      ...(ctx.draw ? [ctx.draw] : []),
    ]);
  }

  /** The top-k real transitions for a step (same env, valid, one per episode). */
  private async retrieve(
    ctx: Pick<DreamContext, 'task' | 'state' | 'action' | 'retrieved'>,
  ): Promise<readonly Transition[]> {
    if (ctx.retrieved) return ctx.retrieved.slice(0, this.format.k);
    const buffer = this.options.buffer;
    if (!buffer || this.format.k <= 0) return [];
    const hits = await buffer.retrieve(
      { instruction: ctx.task.instruction, observation: ctx.state.text, action: ctx.action },
      this.format.k,
      { env: ctx.task.env, validOnly: true, diverse: true, source: ['offline', 'real'] },
    );
    return hits.map((h) => h.transition);
  }

  // ---- 2–3. network and decoding: the calls of one turn of the event loop, as one batch -------------

  private enqueue(kind: AnswerKind, key: string, prompt: Tokens, build: () => Promise<Sequence>): Promise<Decoding> {
    return new Promise((resolve) => {
      this.queue.push({ kind, key, build, prompt, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        // Every call of this turn of the event loop joins the batch.
        setTimeout(() => {
          this.scheduled = false;
          void this.flush();
        }, 0);
      }
    });
  }

  private async flush(): Promise<void> {
    // One batch at a time; calls that arrive meanwhile form the next one.
    while (this.flushing) await this.flushing;
    const taken = this.queue.splice(0, this.queue.length);
    if (taken.length === 0) return;
    this.flushing = this.decodeAll(taken).finally(() => {
      this.flushing = null;
    });
    await this.flushing;
    if (this.queue.length && !this.scheduled) {
      this.scheduled = true;
      setTimeout(() => {
        this.scheduled = false;
        void this.flush();
      }, 0);
    }
  }

  private async decodeAll(pending: Pending[]): Promise<void> {
    const maxBatch = Math.max(1, this.options.maxBatch ?? 64);
    // Identical requests are decoded once.
    const unique = new Map<string, Pending[]>();
    for (const p of pending)
      unique.set(`${p.kind}\u0000${p.key}`, [...(unique.get(`${p.kind}\u0000${p.key}`) ?? []), p]);
    const groups = [...unique.values()];
    this.stats.rows += pending.length;
    for (let start = 0; start < groups.length; start += maxBatch) {
      const chunk = groups.slice(start, start + maxBatch);
      const started = this.now();
      try {
        const contexts = await Promise.all(chunk.map((g) => g[0].build()));
        const decoded = await this.decode(
          contexts,
          chunk.map((g) => g[0].prompt),
          chunk.map((g) => g[0].kind),
        );
        const ms = (this.now() - started) / chunk.length;
        this.stats.batches++;
        this.stats.decodedRows += chunk.length;
        chunk.forEach((group, i) => {
          const tokens = decoded[i].tokens;
          // New ids only for an answer that has placeholders.
          const names =
            this.format.freshIds && tokens.ids.some((id) => this.tokenizer.freshIndex(id) >= 0)
              ? freshNames(this.format.freshIds, contexts[i])
              : undefined;
          const text =
            group[0].kind !== 'initial'
              ? decodeAnswer(this.tokenizer, tokens, names)
              : decodeState(this.tokenizer, tokens, 0, names);
          const result = {
            text,
            raw: bound(this.tokenizer.decodeWithMarkers(tokens), 2000),
            promptTokens: contexts[i].ids.length,
            completionTokens: tokens.ids.length,
            ms,
          };
          group.forEach((p, j) =>
            p.resolve(j === 0 ? result : { ...result, promptTokens: 0, completionTokens: 0, ms: 0, shared: true }),
          );
        });
      } catch (error) {
        // A batch that cannot be decoded costs its transitions, never the run.
        const reason = `the learned model failed to decode: ${(error as Error).message}`;
        for (const group of chunk)
          for (const p of group)
            p.resolve({
              text: { observation: '', admissible: [] },
              raw: '',
              promptTokens: 0,
              completionTokens: 0,
              ms: 0,
              error: reason,
            });
      }
    }
  }

  /** One batch, here or split among the decoder threads (in row order, so the result is the same). */
  private async decode(contexts: Sequence[], prompts: Tokens[], kinds: AnswerKind[]): Promise<Decoded[]> {
    const sampling = { temperature: this.temperature, seed: this.options.seed ?? 0 };
    const decoders = this.options.decoders ?? [];
    if (decoders.length < 2 || contexts.length < 2 * decoders.length)
      return this.decoder.decode(contexts, prompts, kinds, sampling);
    // Chunks handed to whichever thread is free (three a thread), so a thread with long answers
    // does not hold the batch while the other idles. Rows are independent: the answers are the same.
    const size = Math.ceil(contexts.length / (3 * decoders.length));
    const out: Decoded[] = new Array(contexts.length);
    let next = 0;
    const work = async (decoder: BatchDecoder) => {
      while (next < contexts.length) {
        const first = next;
        next += size;
        const part = <T>(items: readonly T[]): T[] => items.slice(first, first + size);
        const decoded = await decoder({
          contexts: part(contexts),
          prompts: part(prompts),
          kinds: part(kinds),
          sampling,
        });
        decoded.forEach((d, i) => (out[first + i] = d));
      }
    };
    await Promise.all(decoders.map(work));
    return out;
  }

  private now(): number {
    return this.options.now?.() ?? globalThis.performance?.now() ?? 0;
  }

  // ---- 3. (decoding) the answer, read back into the env's text and checked --------------------------

  private toPrediction(ctx: DreamContext, result: Decoding, goal: Judged | null): Prediction {
    const usage = { promptTokens: result.promptTokens, completionTokens: result.completionTokens, ms: result.ms };
    const same = { ...ctx.state, admissible: ctx.state.admissible.slice() };
    const base = {
      reasoning: '',
      usage,
      attempts: result.shared ? 0 : 1,
      notes: [] as string[],
      raw: result.raw,
      ...(result.shared ? { cached: true } : {}),
    };
    // An answer that cannot be read, or contradicts itself: an invalid transition, never learned from.
    const invalid = (invalidReason: string): Prediction => ({
      ...base,
      next: same,
      reward: 0,
      terminated: false,
      valid: false,
      actionValid: false,
      invalidReason,
    });
    if (result.error) return invalid(result.error);
    const answer = result.text as ReturnType<typeof decodeAnswer>;
    if (!answer.valid)
      return { ...base, next: same, reward: 0, terminated: false, valid: true, actionValid: false, score: 0 };
    // An empty state: the step left the page as it was, read back exactly.
    if (answer.unchanged)
      return { ...base, next: same, reward: 0, terminated: false, valid: true, actionValid: true, score: 0 };
    const text = concreteObservation(this.card, answer.observation, ctx.task.instruction);
    const globals = globalActionsOf(this.card, ctx.history[0]?.admissible ?? ctx.state.admissible);
    const admissible = answer.terminated
      ? []
      : this.card.inferredAdmissible
        ? this.inferred(ctx.task.instruction, text, ctx.action)
        : concreteAdmissible(this.card, answer.admissible, globals, text);
    const inconsistent = checkConsistency(
      {
        valid: true,
        observation: answer.observation,
        admissible: answer.admissible,
        reward: answer.reward,
        terminated: answer.terminated,
      },
      admissible,
    );
    if (inconsistent) return invalid(inconsistent);
    const verdict = goal
      ? this.goalReward(goal, answer.terminated, base.notes)
      : answer.terminated
        ? this.judge(ctx, answer.reward, base.notes)
        : { reward: answer.reward };
    return {
      ...base,
      next: { text, admissible, task: ctx.task },
      ...verdict,
      terminated: answer.terminated,
      valid: true,
      actionValid: true,
      score: verdict.reward,
    };
  }

  /** The candidates of a dreamed state of a domain whose lists are inferred (as a deployed agent gets them). */
  private inferred(instruction: string, observation: string, previousAction?: string): string[] {
    const infer = this.options.inferAdmissible!; // the constructor requires it for such a card
    return infer({ instruction, observation, ...(previousAction !== undefined ? { previousAction } : {}) });
  }

  // ---- 4. verdict: the reward of an ending ----------------------------------------------------------

  /** What the model's verdict head reads of a step. */
  private verdictInput(ctx: DreamContext): VerdictInput {
    const shown = shownSteps(ctx.history, this.format.historyLength);
    return {
      instruction: ctx.task.instruction,
      history: shown.map((s) => s.action),
      historyPages: shown.map((s) => s.observation),
      episode: ctx.history.flatMap((s) => (s.valid ? [s.action] : [])),
      state: ctx.state,
      action: ctx.action,
    };
  }

  /** A goal head's verdict on a step, decided before anything is decoded (null without a goal head). */
  private goalVerdict(ctx: DreamContext): Judged | null {
    if (!this.verdict || verdictKind(this.verdict) !== 'goal') return null;
    return judgeStep(this.card, this.verdict, this.verdictInput(ctx), this.options.verdictLambda);
  }

  /** The reward of a step a goal head decided: its p(success) (or 1) where it ends the episode, else 0. */
  private goalReward(goal: Judged, terminated: boolean, notes: string[]): Verdict {
    notes.push(
      `goal head: p(ends with success) ${goal.p.toFixed(3)} from ${this.featureText(goal.features)}` +
        `; members ${memberText(goal)}`,
    );
    const disagreement = goal.disagreement;
    if (!terminated) return { reward: 0, disagreement };
    return this.options.verdictReward === 'outcome'
      ? { reward: 1, disagreement }
      : { reward: goal.p, success: true, disagreement };
  }

  private featureText(features: readonly number[]): string {
    return this.verdict!.features.map((f, i) => `${f} ${+features[i].toFixed(3)}`).join(', ');
  }

  /** An episode's end: the outcome head's reward (and outcome) where there is one, else the generator's. */
  private judge(ctx: DreamContext, written: number, notes: string[]): Verdict {
    if (!this.verdict) return { reward: written };
    const judged = judgeStep(this.card, this.verdict, this.verdictInput(ctx), this.options.verdictLambda);
    const { p, features } = judged;
    notes.push(
      `verdict head: p(success) ${p.toFixed(3)} from ${this.featureText(features)}; members ${memberText(judged)} ` +
        `(the generator wrote reward ${written})`,
    );
    const success = p >= 0.5;
    const disagreement = judged.disagreement;
    return this.options.verdictReward === 'outcome'
      ? { reward: success ? 1 : 0, disagreement }
      : { reward: p, success, disagreement };
  }

  /** The verdict head that judges the dream now (the stored one, or its refit after `correct`); null: none. */
  get verdictInUse(): VerdictHead | null {
    return this.verdict;
  }

  /**
   * Refits the verdict head on its own real data and every replay so far (misses are its
   * negatives), with its kind, ensemble size and training seed, so the same replays give the same
   * head. Cached answers were judged by the old head: they go. Without a head nothing is refitted.
   */
  async correct(correction: DreamCorrection): Promise<void> {
    if (!this.verdict) return;
    this.corrections.push(...correction.episodes);
    this.verdictData ??= await this.verdictTrainingEpisodes(correction);
    const seed = this.manifest.training?.seed ?? 0;
    const episodes = [...this.verdictData, ...this.corrections];
    const size = this.verdict.members.length;
    const head = fitHeadFor(
      this.card,
      episodes,
      this.manifest.formatOptions.historyLength,
      { size, seed },
      verdictKind(this.verdict),
    );
    if (head) this.verdict = head;
    this.cache.clear();
  }

  /** The training split of the buffer's real episodes, as training and `expmodel verdict` split them. */
  private async verdictTrainingEpisodes({ buffer }: DreamCorrection): Promise<RecordedEpisode[]> {
    if (!buffer)
      throw new Error(
        `The learned model '${this.manifest.name}' refits its verdict on the real episodes it was fitted on, ` +
          "and no replay buffer was given: hand the trainer the run's buffer (the CLI and the page do).",
      );
    const { episodes, tasks } = await realEpisodes(buffer, this.manifest.env);
    const seed = this.manifest.training?.seed ?? 0;
    return splitByTask(episodes, tasks, learnedTrainOptions().validationShare, seed).train;
  }

  // ---- a first state (a task with no real start page) -----------------------------------------------

  async initial(task: Task, _signal?: AbortSignal): Promise<Observation> {
    const result = await this.enqueue(
      'initial',
      `initial:${task.env}:${task.instruction}`,
      encodePrompt(this.tokenizer, null),
      async () => encodeInitialContext(this.tokenizer, this.card, task, [], this.format),
    );
    const state = result.text as ReturnType<typeof decodeState>;
    const text = state.observation ? concreteObservation(this.card, state.observation, task.instruction) : '';
    const admissible = this.card.inferredAdmissible
      ? text
        ? this.inferred(task.instruction, text)
        : []
      : concreteAdmissible(this.card, state.admissible, [], text, false);
    if (result.error || !text || admissible.length === 0) {
      throw new ExperienceModelError(
        `The learned experience model (${this.label}) wrote no usable first state for task '${task.id}': ` +
          `${result.error ?? (!text ? 'the state is empty' : 'it lists no admissible actions')}. Start the task from a real environment, or train the model on more episodes.`,
        result.raw,
      );
    }
    return { text, admissible, task };
  }

  /** Floating-point operations this thread's fused decoder ran (0 for the tfjs decoder). */
  get decoderFlops(): number {
    return this.decoder.flops;
  }

  dispose(): void {
    this.net.dispose();
    this.decoder.dispose();
    this.options.release?.();
  }
}
