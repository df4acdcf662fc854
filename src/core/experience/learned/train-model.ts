/**
 * Training a learned experience model end to end, the same in Node and in a page worker: the
 * buffer's real episodes → split by task → tokenizer → SFT pairs → network → fit → model files.
 * Every epoch hands a checkpoint to the caller; given one back, training resumes where it was
 * (same pairs, same tokenizer, same weights and optimizer state).
 */
import type { ReplayBuffer } from '../../buffer/buffer';
import type { Task } from '../../types';
import type { DomainCard } from '../domain-card';
import { DEFAULT_FIT_OPTIONS, fitNetwork, freshFitState, type FitDeps, type FitOptions, type FitState } from './fit';
import { DEFAULT_FORMAT_OPTIONS, freshIdShape, SEGMENT_COUNT, type FormatOptions } from './format';
import { CHECKPOINT_FORMAT, encodeModelFiles, type ModelManifest, type TrainingRecord } from './model-file';
import { ExperienceNetwork, type NamedWeight, type NetworkConfig } from './network';
import {
  bufferRetriever,
  buildPairs,
  countEpisodesLeftOut,
  countLeftOut,
  emptyPairAccount,
  corpusTexts,
  realEpisodes,
  splitByTask,
  type RecordedEpisode,
  type SftPair,
} from './sft-data';
import { Tokenizer, type TokenizerJSON } from './tokenizer';
import { fitHeadFor } from './verdict';

/** The network's size; the vocabulary size comes from the tokenizer. */
export type NetworkShape = Omit<NetworkConfig, 'vocabSize' | 'segments'>;

export const DEFAULT_NETWORK: Readonly<NetworkShape> = Object.freeze({
  dModel: 64,
  encoderBlocks: 2,
  kernel: 5,
  decoderLayers: 2,
  heads: 1,
  selfDim: 32,
  attentionDim: 32,
  ffMult: 2,
  maxContext: 768,
  maxAnswer: 384,
});

export interface LearnedTrainOptions {
  name: string;
  network: NetworkShape;
  format: FormatOptions;
  fit: FitOptions;
  /** Share of tasks kept for validation. */
  validationShare: number;
  minCount: number;
  maxVocab: number;
  /** At most this many training episodes (the data-efficiency study); default all. */
  maxEpisodes?: number;
  /** Fit a verdict head (verdict.ts) on the training episodes' real terminal steps (default true). */
  verdictHead?: boolean;
}

export function learnedTrainOptions(
  partial: Partial<Omit<LearnedTrainOptions, 'network' | 'format' | 'fit'>> & {
    network?: Partial<NetworkShape>;
    format?: Partial<FormatOptions>;
    fit?: Partial<FitOptions>;
  } = {},
): LearnedTrainOptions {
  return {
    name: partial.name ?? 'model',
    validationShare: partial.validationShare ?? 0.1,
    minCount: partial.minCount ?? 2,
    maxVocab: partial.maxVocab ?? 6000,
    ...(partial.maxEpisodes !== undefined ? { maxEpisodes: partial.maxEpisodes } : {}),
    ...(partial.verdictHead === false ? { verdictHead: false } : {}),
    network: { ...DEFAULT_NETWORK, ...partial.network },
    format: { ...DEFAULT_FORMAT_OPTIONS, ...partial.format },
    fit: { ...DEFAULT_FIT_OPTIONS, ...partial.fit },
  };
}

/** Placeholders for unseen ids (tokenizer.ts, "Fresh ids"): more than the ten new ids of a listing and its list. */
export const FRESH_ID_PLACEHOLDERS = 16;

/** A training in progress: enough to resume it exactly. */
export interface LearnedCheckpoint {
  format: typeof CHECKPOINT_FORMAT;
  env: string;
  options: LearnedTrainOptions;
  tokenizer: TokenizerJSON;
  fit: Omit<FitState, 'optimizer' | 'bestWeights'>;
  weights: NamedWeight[];
  optimizer: NamedWeight[];
  bestWeights: NamedWeight[];
  /** Seconds spent so far (before this resume). */
  seconds: number;
}

export interface PreparedData {
  tokenizer: Tokenizer;
  train: SftPair[];
  validation: SftPair[];
  /** The training episodes the pairs come from (the verdict head fits their terminal steps). */
  trainEpisodes: RecordedEpisode[];
  /** The options' format, with the fresh ids' shape where they have them. */
  format: FormatOptions;
  record: TrainingRecord['data'];
}

/** The split, tokenizer and pairs of an env's real episodes in `buffer` (the tokenizer is reused when resuming). */
export async function prepareData(
  buffer: ReplayBuffer,
  env: string,
  card: DomainCard,
  options: LearnedTrainOptions,
  tokenizer?: Tokenizer,
): Promise<PreparedData> {
  const { episodes, tasks } = await realEpisodes(buffer, env);
  if (episodes.length === 0)
    throw new Error(
      `The replay buffer has no real episodes of '${env}' to learn from: seed it with the shipped dataset or import trajectories first.`,
    );
  const split = splitByTask(episodes, tasks as Map<string, Task>, options.validationShare, options.fit.seed);
  const trainEpisodes = limitEpisodes(split.train, options.maxEpisodes);
  const vocabulary =
    tokenizer ??
    Tokenizer.learn(corpusTexts(card, trainEpisodes), {
      minCount: options.minCount,
      maxVocab: options.maxVocab,
      freshIds: FRESH_ID_PLACEHOLDERS,
    });
  const format = withFreshIds(options.format, vocabulary, corpusTexts(card, trainEpisodes));
  const retrieve = bufferRetriever(buffer);
  // Every recorded transition is counted: a pair, or left out by a reason (sft-data.ts PairAccount).
  const account = emptyPairAccount();
  countLeftOut(account, 'held-out-task', split.heldOutSteps);
  countEpisodesLeftOut(account, 'episode-limit', unlimitedEpisodes(split.train, trainEpisodes));
  const train = await buildPairs(trainEpisodes, vocabulary, card, format, retrieve, account);
  const validation = await buildPairs(split.validation, vocabulary, card, format, retrieve, account);
  return {
    tokenizer: vocabulary,
    train,
    validation,
    trainEpisodes,
    format,
    record: {
      source: `${episodes.length} real episodes of ${env}`,
      episodes: episodes.length,
      trainEpisodes: trainEpisodes.length,
      validationEpisodes: split.validation.length,
      trainPairs: train.length,
      validationPairs: validation.length,
      heldOutDropped: split.heldOutDropped,
      account,
    },
  };
}

/** The format with fresh ids of the training texts' shape (none when the texts have no ids). */
function withFreshIds(format: FormatOptions, tokenizer: Tokenizer, texts: Iterable<string>): FormatOptions {
  if (tokenizer.freshIdTokens.length !== FRESH_ID_PLACEHOLDERS) {
    throw new Error(
      `The tokenizer has ${tokenizer.freshIdTokens.length} fresh-id placeholders, the format needs ` +
        `${FRESH_ID_PLACEHOLDERS}; train without resuming.`,
    );
  }
  return { ...format, freshIds: freshIdShape(texts, FRESH_ID_PLACEHOLDERS) };
}

/** The episodes `limitEpisodes` left out. */
function unlimitedEpisodes(all: readonly RecordedEpisode[], kept: readonly RecordedEpisode[]): RecordedEpisode[] {
  const chosen = new Set(kept);
  return all.filter((e) => !chosen.has(e));
}

/** The first `n` episodes in a seeded order that keeps every kind of episode represented. */
function limitEpisodes(episodes: readonly RecordedEpisode[], n: number | undefined): RecordedEpisode[] {
  if (n === undefined || n >= episodes.length) return episodes.slice();
  // Episodes are sorted by id (source/seed): take every k-th, so expert, noisy and random parts all stay.
  const step = episodes.length / n;
  return Array.from({ length: n }, (_, i) => episodes[Math.floor(i * step)]);
}

export interface LearnedTrainDeps extends Omit<FitDeps, 'onEpoch'> {
  /** Continue this training. */
  resume?: LearnedCheckpoint;
  onCheckpoint?: (checkpoint: LearnedCheckpoint) => void | Promise<void>;
  /** The tfjs backend in use, for the record. */
  backend?: string;
}

export interface LearnedTrainResult {
  manifest: string;
  weights: Uint8Array;
  parsed: ModelManifest;
  network: ExperienceNetwork;
  tokenizer: Tokenizer;
  data: PreparedData;
}

/** Trains (or resumes training) a model of `env` on the buffer's real episodes; returns its files and the trained network. */
export async function trainLearnedModel(
  buffer: ReplayBuffer,
  env: string,
  card: DomainCard,
  options: LearnedTrainOptions,
  deps: LearnedTrainDeps = {},
): Promise<LearnedTrainResult> {
  const resume = deps.resume;
  if (resume && resume.env !== env)
    throw new Error(`The checkpoint is of '${resume.env}', not '${env}'; train without resuming, or name its env.`);
  const chosen = resume?.options ?? options;
  const data = await prepareData(buffer, env, card, chosen, resume ? Tokenizer.fromJSON(resume.tokenizer) : undefined);
  const config: NetworkConfig = { ...chosen.network, vocabSize: data.tokenizer.size, segments: SEGMENT_COUNT };
  const net = resume
    ? ExperienceNetwork.fromWeights(config, resume.weights)
    : ExperienceNetwork.create(config, chosen.fit.seed);
  const now = deps.now ?? (() => 0);
  const started = now();
  const before = resume?.seconds ?? 0;
  const state: FitState = resume
    ? { ...resume.fit, optimizer: resume.optimizer, bestWeights: resume.bestWeights }
    : freshFitState();
  try {
    const final = await fitNetwork(net, data.tokenizer, data.train, data.validation, chosen.fit, state, {
      ...deps,
      onEpoch: async (s) => {
        if (!deps.onCheckpoint) return;
        const { optimizer, bestWeights, ...fit } = s;
        await deps.onCheckpoint({
          format: CHECKPOINT_FORMAT,
          env,
          options: chosen,
          tokenizer: data.tokenizer.toJSON(),
          fit,
          weights: await net.getWeights(),
          optimizer,
          bestWeights: bestWeights ?? [],
          seconds: before + (now() - started) / 1000,
        });
      },
    });
    const seconds = before + (now() - started) / 1000;
    const tokens = final.history.reduce((s, e) => s + e.tokensPerSecond * e.seconds, 0);
    const training: TrainingRecord = {
      data: data.record,
      seed: chosen.fit.seed,
      epochs: final.history,
      bestEpoch: final.bestEpoch,
      bestValidationLoss: final.bestValidationLoss,
      seconds,
      tokensPerSecond: seconds > 0 ? tokens / seconds : 0,
      backend: deps.backend ?? 'unknown',
    };
    const verdict =
      chosen.verdictHead === false
        ? null
        : fitHeadFor(card, data.trainEpisodes, chosen.format.historyLength, { seed: chosen.fit.seed });
    const files = encodeModelFiles(
      {
        name: chosen.name,
        env,
        card,
        network: config,
        formatOptions: data.format,
        tokenizer: data.tokenizer.toJSON(),
        training,
        ...(verdict ? { verdict } : {}),
      },
      await net.getWeights(),
    );
    return {
      ...files,
      parsed: JSON.parse(files.manifest) as ModelManifest,
      network: net,
      tokenizer: data.tokenizer,
      data,
    };
  } catch (error) {
    net.dispose();
    throw error;
  }
}

/**
 * The model a stopped training's checkpoint holds, as files: its best epoch's weights, with the
 * pairs, tokenizer and verdict head a finished training writes. It is trainLearnedModel resumed
 * with nothing left to train (the fit state marked stopped), so the two never differ; the record
 * lists the epochs the checkpoint finished. The checkpoint itself is unchanged (it still resumes).
 */
export function modelFromCheckpoint(
  buffer: ReplayBuffer,
  card: DomainCard,
  checkpoint: LearnedCheckpoint,
  deps: Pick<LearnedTrainDeps, 'backend' | 'now'> = {},
): Promise<LearnedTrainResult> {
  if (checkpoint.fit.epochsDone === 0 || checkpoint.bestWeights.length === 0) {
    return Promise.reject(new Error('The checkpoint has no finished epoch: there is no model in it to keep.'));
  }
  const resume: LearnedCheckpoint = { ...checkpoint, fit: { ...checkpoint.fit, stopped: true } };
  return trainLearnedModel(buffer, checkpoint.env, card, checkpoint.options, { ...deps, resume });
}
