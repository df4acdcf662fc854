/**
 * Supervised training of the experience network on SFT pairs: teacher forcing with the loss on
 * the answer tokens only, Adam with warm-up and cosine decay, gradient clipping by global norm,
 * a validation loss every epoch and early stopping (the best epoch's weights are kept). The state
 * after every epoch is plain data, so training resumes exactly where a checkpoint left it.
 *
 * Batches group pairs of similar length (less padding); their order is shuffled each epoch with
 * a seeded stream. The clock is injected (tokens/s and time left), never read here.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../../rng';
import { applyClippedGradients, ResumableAdam } from '../../rl/batch';
import type { ExperienceNetwork, NamedWeight, NetworkConfig, TrainBatch } from './network';
import type { SftPair } from './sft-data';
import { TrainingSpeed } from './time-left';
import type { Tokenizer } from './tokenizer';

export interface FitOptions {
  /** Most epochs (early stopping may end sooner). */
  epochs: number;
  /** Pairs per batch. */
  batchSize: number;
  learningRate: number;
  /** Linear warm-up steps, then cosine decay to 10 % by the last epoch. */
  warmupSteps: number;
  maxGradNorm: number;
  /** Stop after this many epochs without a better validation loss. */
  patience: number;
  seed: number;
  /** Loss weight of the verdicts (default VERDICT_WEIGHT). */
  verdictWeight?: number;
  /**
   * Each batch's gradient as the sum of this many shards (every shards-th pair from the i-th), in
   * shard order (default 1: the whole batch at once). Helper threads (FitDeps.helpers) take shards;
   * the weights depend on the shard count only, never on the thread count.
   */
  shards?: number;
}

export const DEFAULT_FIT_OPTIONS: Readonly<FitOptions> = Object.freeze({
  epochs: 12,
  batchSize: 16,
  learningRate: 2e-3,
  warmupSteps: 100,
  maxGradNorm: 1,
  patience: 2,
  seed: 0,
});

export interface EpochRecord {
  epoch: number;
  trainLoss: number;
  validationLoss: number;
  /** Context and answer tokens per second over the epoch. */
  tokensPerSecond: number;
  seconds: number;
}

/** Everything needed to continue training exactly (plain data). */
export interface FitState {
  epochsDone: number;
  step: number;
  bestValidationLoss: number;
  bestEpoch: number;
  epochsWithoutGain: number;
  history: EpochRecord[];
  stopped: boolean;
  optimizer: NamedWeight[];
  /** A copy of the best epoch's weights (the model when training ends). */
  bestWeights?: NamedWeight[];
}

export type FitProgress =
  | {
      kind: 'batch';
      epoch: number;
      epochs: number;
      batch: number;
      batches: number;
      loss: number;
      /** Training tokens per second: measured over `speedBatches` (time-left.ts); this epoch's so far while that is 0. */
      tokensPerSecond: number;
      /** Batches the speed and the times left are measured over (0 while the run warms up: no time left yet). */
      speedBatches: number;
      /** Context and answer tokens of one epoch's training pairs. */
      epochTokens: number;
      /** Seconds to the last epoch's end, at most (early stopping may end sooner); null while unmeasured. */
      secondsLeft: number | null;
      /** Seconds to this epoch's end and checkpoint; null while unmeasured. */
      epochSecondsLeft: number | null;
    }
  | { kind: 'epoch'; record: EpochRecord; best: boolean; stopping: boolean };

export interface FitDeps {
  /** Milliseconds (performance.now or Date.now); without it the speeds read 0. */
  now?: () => number;
  onProgress?: (event: FitProgress) => void;
  /** Called after every epoch with the state to checkpoint (awaited). */
  onEpoch?: (state: FitState) => void | Promise<void>;
  signal?: AbortSignal;
  /** Threads that compute shards' gradients beside this one (src/node/workers/train-pool.ts); none: all here. */
  helpers?: readonly GradientHelper[];
}

/** One shard's loss and gradients (by weight name), computed by another thread on the network given. */
export interface GradientHelper {
  gradients(shard: ShardRequest): Promise<ShardGradients>;
}

export interface ShardRequest {
  config: NetworkConfig;
  weights: NamedWeight[];
  batch: TrainBatch;
  /** The whole batch's target weight (ExperienceNetwork.loss). */
  normalizer: number;
}

export interface ShardGradients {
  loss: number;
  grads: Record<string, Float32Array>;
}

class ScheduledAdam extends ResumableAdam {
  setLearningRate(rate: number): void {
    this.learningRate = rate;
  }
}

// ---- batches ------------------------------------------------------------------------------------

/** Pairs in batches of similar length (sorted by length, chunked); the chunk order is the caller's. */
export function lengthBuckets(pairs: readonly SftPair[], batchSize: number): SftPair[][] {
  const sorted = pairs
    .slice()
    .sort(
      (a, b) =>
        a.context.ids.length + a.answer.ids.length - (b.context.ids.length + b.answer.ids.length) ||
        (a.episodeId < b.episodeId ? -1 : a.episodeId > b.episodeId ? 1 : 0),
    );
  const out: SftPair[][] = [];
  for (let i = 0; i < sorted.length; i += batchSize) out.push(sorted.slice(i, i + batchSize));
  return out;
}

/** Loss weight of an answer's verdicts (valid, terminated, reward): few tokens that decide the reward. */
export const VERDICT_WEIGHT = 4;

/** Extra weight of each terminal reward class, so both outcomes count alike (successful buys outnumber failed ones in offline data). */
export interface RewardBalance {
  r0: number;
  r1: number;
}

/** Balanced class weights of the terminal rewards in `pairs` (mean weight 1 per terminal step). */
export function rewardBalance(pairs: readonly SftPair[], tokenizer: Tokenizer): RewardBalance {
  const [yes, r0, r1] = [tokenizer.special('<yes>'), tokenizer.special('<r0>'), tokenizer.special('<r1>')];
  let n0 = 0,
    n1 = 0;
  for (const p of pairs) {
    if (p.kind !== 'next' || p.answer.ids[1] !== yes) continue;
    if (p.answer.ids[2] === r0) n0++;
    else if (p.answer.ids[2] === r1) n1++;
  }
  const n = n0 + n1;
  return n0 && n1 ? { r0: n / (2 * n0), r1: n / (2 * n1) } : { r0: 1, r1: 1 };
}

/** How a batch weighs and targets the verdicts. */
export interface BatchOptions {
  balance?: RewardBalance;
  verdictWeight?: number;
}

/**
 * A padded training batch. Decoder inputs: the prompt, `<ans>`, then the answer shifted right;
 * targets: the answer, at the positions from `<ans>` on (the verdicts weighted up).
 */
export function makeBatch(pairs: readonly SftPair[], tokenizer: Tokenizer, options: BatchOptions = {}): TrainBatch {
  const balance = options.balance ?? { r0: 1, r1: 1 };
  const verdictWeight = options.verdictWeight ?? VERDICT_WEIGHT;
  const B = pairs.length;
  const P = pairs[0].prompt.ids.length;
  const Lc = Math.max(...pairs.map((p) => p.context.ids.length));
  const La = P + Math.max(...pairs.map((p) => p.answer.ids.length));
  const ctx = {
    ids: new Int32Array(B * Lc),
    spaces: new Int32Array(B * Lc),
    cases: new Int32Array(B * Lc),
    segments: new Int32Array(B * Lc),
    positions: new Int32Array(B * Lc),
  };
  const contextMask = new Float32Array(B * Lc);
  const dec = {
    ids: new Int32Array(B * La),
    spaces: new Int32Array(B * La),
    cases: new Int32Array(B * La),
    positions: new Int32Array(B * La),
  };
  const targetMask = new Float32Array(B * La);
  const targetIds = new Int32Array(B * La),
    targetSpaces = new Int32Array(B * La),
    targetCases = new Int32Array(B * La);
  const copyMatch = new Float32Array(B * La * Lc);
  const start = tokenizer.special('<ans>');
  const [yes, r1] = [tokenizer.special('<yes>'), tokenizer.special('<r1>')];
  pairs.forEach((p, b) => {
    const c = p.context,
      a = p.answer;
    if (p.prompt.ids.length !== P)
      throw new Error(`makeBatch: prompts of ${P} and ${p.prompt.ids.length} tokens in one batch.`);
    for (let j = 0; j < Lc; j++) ctx.positions[b * Lc + j] = j;
    ctx.ids.set(c.ids, b * Lc);
    ctx.spaces.set(c.spaces, b * Lc);
    ctx.cases.set(c.cases, b * Lc);
    ctx.segments.set(c.segments, b * Lc);
    contextMask.fill(1, b * Lc, b * Lc + c.ids.length);
    const input = {
      ids: [...p.prompt.ids, start, ...a.ids.slice(0, -1)],
      spaces: [...p.prompt.spaces, 0, ...a.spaces.slice(0, -1)],
      cases: [...p.prompt.cases, 0, ...a.cases.slice(0, -1)],
    };
    for (let t = 0; t < La; t++) {
      const o = b * La + t;
      dec.positions[o] = t;
      if (t >= input.ids.length) continue;
      dec.ids[o] = input.ids[t];
      dec.spaces[o] = input.spaces[t];
      dec.cases[o] = input.cases[t];
      const k = t - P; // the answer token predicted at this position
      if (k < 0) continue;
      const terminalReward = p.kind === 'next' && k === 2 && a.ids[1] === yes;
      targetMask[o] =
        (p.kind === 'next' && k < 3 ? verdictWeight : 1) *
        (terminalReward ? (a.ids[2] === r1 ? balance.r1 : balance.r0) : 1);
      targetIds[o] = a.ids[k];
      targetSpaces[o] = a.spaces[k];
      targetCases[o] = a.cases[k];
      for (let j = 0; j < c.ids.length; j++) if (c.ids[j] === a.ids[k]) copyMatch[o * Lc + j] = 1;
    }
  });
  return {
    rows: B,
    contextLength: Lc,
    answerLength: La,
    context: ctx,
    contextMask,
    decoder: dec,
    targetMask,
    targetIds,
    targetSpaces,
    targetCases,
    copyMatch,
  };
}

function tokensOf(batch: readonly SftPair[]): number {
  return batch.reduce((s, p) => s + p.context.ids.length + p.answer.ids.length, 0);
}

function answerTokens(batch: readonly SftPair[]): number {
  return batch.reduce((s, p) => s + p.answer.ids.length, 0);
}

// ---- gradients, of the whole batch or in shards -------------------------------------------------

/** Shard `index` of `count`: every count-th pair from the index-th (pairs come sorted by length, so shards match). */
export function shardOf<T>(pairs: readonly T[], index: number, count: number): T[] {
  return pairs.filter((_, i) => i % count === index);
}

/** A shard's weighted loss sum over `normalizer` and its gradients by weight name; every thread runs this. */
export function shardGradients(
  net: ExperienceNetwork,
  batch: TrainBatch,
  normalizer: number,
): { loss: tf.Scalar; grads: Map<string, tf.Tensor> } {
  const { value, grads } = tf.variableGrads(() => net.loss(batch, normalizer).total, net.trainableVariables());
  return { loss: value, grads: new Map([...net.variables].map(([name, v]) => [name, grads[v.name]])) };
}

/** The batch's mean loss and its gradients by variable: at once, or as the sum of its shards in shard order. */
async function batchGradients(
  net: ExperienceNetwork,
  pairs: readonly SftPair[],
  tokenizer: Tokenizer,
  batchOptions: BatchOptions,
  shards: { count: number; helpers: readonly GradientHelper[] },
): Promise<{ loss: number; grads: tf.NamedTensorMap }> {
  if (shards.count <= 1) {
    const batch = makeBatch(pairs, tokenizer, batchOptions);
    const { value, grads } = tf.variableGrads(() => net.loss(batch).total, net.trainableVariables());
    const loss = (await value.data())[0];
    value.dispose();
    return { loss, grads };
  }
  const parts = Array.from({ length: shards.count }, (_, i) => shardOf(pairs, i, shards.count))
    .filter((part) => part.length > 0)
    .map((part) => makeBatch(part, tokenizer, batchOptions));
  const normalizer = Math.max(
    1e-9,
    parts.reduce((sum, part) => sum + part.targetMask.reduce((s, w) => s + w, 0), 0),
  );
  // Shard i runs on thread i mod threads (0: this one). The helpers get theirs first, then this thread works.
  const threads = shards.helpers.length + 1;
  const weights = threads > 1 ? await net.getWeights() : [];
  const remote = parts.map((part, i) =>
    i % threads
      ? shards.helpers[(i % threads) - 1].gradients({ config: net.config, weights, batch: part, normalizer })
      : null,
  );
  const local = parts.map((part, i) => (i % threads ? null : shardGradients(net, part, normalizer)));
  try {
    const results = await Promise.all(remote);
    let loss = 0;
    for (let i = 0; i < parts.length; i++) loss += results[i]?.loss ?? (await local[i]!.loss.data())[0];
    const grads = tf.tidy(() => {
      const sums: tf.NamedTensorMap = {};
      for (const [name, variable] of net.variables) {
        const terms = parts.map(
          (_, i) => local[i]?.grads.get(name) ?? tf.tensor(results[i]!.grads[name], variable.shape),
        );
        sums[variable.name] = terms.reduce((sum, term) => tf.add(sum, term));
      }
      return sums;
    });
    return { loss, grads };
  } finally {
    for (const shard of local) if (shard) tf.dispose([shard.loss, ...shard.grads.values()]);
  }
}

// ---- loss and training ----------------------------------------------------------------------------

/** Token-weighted mean loss over pairs (no gradients). */
export async function evaluateLoss(
  net: ExperienceNetwork,
  tokenizer: Tokenizer,
  pairs: readonly SftPair[],
  batchSize: number,
  options: BatchOptions = {},
): Promise<number> {
  let sum = 0,
    count = 0;
  for (const batch of lengthBuckets(pairs, batchSize)) {
    const loss = tf.tidy(() => net.loss(makeBatch(batch, tokenizer, options)).total);
    const n = answerTokens(batch);
    sum += (await loss.data())[0] * n;
    count += n;
    loss.dispose();
  }
  return count ? sum / count : NaN;
}

function learningRateAt(step: number, totalSteps: number, o: FitOptions): number {
  if (step < o.warmupSteps) return (o.learningRate * (step + 1)) / o.warmupSteps;
  const progress = Math.min(1, (step - o.warmupSteps) / Math.max(1, totalSteps - o.warmupSteps));
  return o.learningRate * (0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI * progress)));
}

export function freshFitState(): FitState {
  return {
    epochsDone: 0,
    step: 0,
    bestValidationLoss: Infinity,
    bestEpoch: 0,
    epochsWithoutGain: 0,
    history: [],
    stopped: false,
    optimizer: [],
  };
}

/**
 * Trains `net` on `train`, validating on `validation` after every epoch, from `state` (fresh or
 * a checkpoint's). Ends with the best epoch's weights in `net`; returns the final state.
 */
export async function fitNetwork(
  net: ExperienceNetwork,
  tokenizer: Tokenizer,
  train: readonly SftPair[],
  validation: readonly SftPair[],
  options: FitOptions,
  state: FitState = freshFitState(),
  deps: FitDeps = {},
): Promise<FitState> {
  if (train.length === 0)
    throw new Error('No training pairs: the buffer has no real transitions of this environment to learn from.');
  const now = deps.now ?? (() => 0);
  const optimizer = new ScheduledAdam(options.learningRate, 0.9, 0.98, 1e-8);
  if (state.optimizer.length) {
    const tensors = state.optimizer.map((w) => ({ name: w.name, tensor: tf.tensor(w.data, w.shape) }));
    await optimizer.setWeights(tensors);
    tf.dispose(tensors.map((t) => t.tensor));
  }
  const buckets = lengthBuckets(train, options.batchSize);
  const batchOptions: BatchOptions = { balance: rewardBalance(train, tokenizer), verdictWeight: options.verdictWeight };
  const totalSteps = buckets.length * options.epochs;
  const epochTokens = buckets.reduce((n, b) => n + tokensOf(b), 0);
  const speed = new TrainingSpeed({
    epochTokens,
    validationTokens: tokensOf(validation),
    batchesPerEpoch: buckets.length,
  });
  let current = { ...state, history: state.history.slice() };
  try {
    for (let epoch = current.epochsDone + 1; epoch <= options.epochs && !current.stopped; epoch++) {
      const started = now();
      const order = Rng.fromSeed(options.seed, 'learned-fit', String(epoch)).shuffle(buckets);
      let lossSum = 0,
        lossCount = 0,
        tokens = 0;
      let batchEnded = started;
      for (let b = 0; b < order.length; b++) {
        if (deps.signal?.aborted) throw new DOMException('Training was stopped.', 'AbortError');
        optimizer.setLearningRate(learningRateAt(current.step, totalSteps, options));
        const shards = { count: options.shards ?? 1, helpers: deps.helpers ?? [] };
        const { loss, grads } = await batchGradients(net, order[b], tokenizer, batchOptions, shards);
        applyClippedGradients(optimizer, grads, options.maxGradNorm);
        if (!Number.isFinite(loss))
          throw new Error(
            `The training loss became ${loss} at epoch ${epoch}, batch ${b + 1}; lower the learning rate.`,
          );
        const n = answerTokens(order[b]);
        const batchTokens = tokensOf(order[b]);
        lossSum += loss * n;
        lossCount += n;
        tokens += batchTokens;
        current.step++;
        const t = now();
        speed.addBatch(batchTokens, (t - batchEnded) / 1000);
        batchEnded = t;
        const elapsed = (t - started) / 1000;
        const left = speed.timeLeft(epochTokens - tokens, options.epochs - epoch);
        deps.onProgress?.({
          kind: 'batch',
          epoch,
          epochs: options.epochs,
          batch: b + 1,
          batches: order.length,
          loss: lossSum / lossCount,
          tokensPerSecond: speed.tokensPerSecond ?? (elapsed > 0 ? tokens / elapsed : 0),
          speedBatches: speed.measuredBatches,
          epochTokens,
          secondsLeft: left?.total ?? null,
          epochSecondsLeft: left?.epoch ?? null,
        });
      }
      net.weightsChanged();
      const validationLoss = validation.length
        ? await evaluateLoss(net, tokenizer, validation, options.batchSize * 2, batchOptions)
        : lossSum / lossCount;
      const seconds = (now() - started) / 1000;
      const record: EpochRecord = {
        epoch,
        trainLoss: lossSum / lossCount,
        validationLoss,
        tokensPerSecond: seconds > 0 ? tokens / seconds : 0,
        seconds,
      };
      const best = validationLoss < current.bestValidationLoss;
      const epochsWithoutGain = best ? 0 : current.epochsWithoutGain + 1;
      const stopping = epochsWithoutGain >= options.patience;
      current = {
        ...current,
        epochsDone: epoch,
        history: [...current.history, record],
        epochsWithoutGain,
        stopped: stopping,
        ...(best ? { bestValidationLoss: validationLoss, bestEpoch: epoch, bestWeights: await net.getWeights() } : {}),
        optimizer: await namedOptimizerWeights(optimizer),
      };
      deps.onProgress?.({ kind: 'epoch', record, best, stopping });
      await deps.onEpoch?.(current);
      speed.addEpochEnd((now() - batchEnded) / 1000);
    }
  } finally {
    optimizer.dispose();
  }
  // The best epoch's weights are the model.
  if (current.bestWeights) net.setWeights(current.bestWeights);
  return current;
}

async function namedOptimizerWeights(optimizer: tf.Optimizer): Promise<NamedWeight[]> {
  const named = await optimizer.getWeights();
  const out = await Promise.all(
    named.map(async (w) => ({ name: w.name, shape: w.tensor.shape, data: Float32Array.from(await w.tensor.data()) })),
  );
  // The iteration count comes as a fresh scalar each call; the rest are the optimizer's own variables.
  for (const w of named) if (w.name === 'iter') w.tensor.dispose();
  return out;
}
