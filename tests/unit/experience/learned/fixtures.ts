/** A toy domain for the learned experience model's tests: a few transitions, a tiny network. */
import type { DomainCard } from '../../../../src/core/experience/domain-card';
import {
  DEFAULT_FORMAT_OPTIONS,
  encodeAnswer,
  encodeContext,
  encodePrompt,
  type Answer,
  type FormatOptions,
} from '../../../../src/core/experience/learned/format';
import { ExperienceNetwork, type NetworkConfig } from '../../../../src/core/experience/learned/network';
import * as tf from '@tensorflow/tfjs';
import { buildMasks, decodeBatch, type Decoded } from '../../../../src/core/experience/learned/decode';
import {
  DEFAULT_FIT_OPTIONS,
  fitNetwork,
  makeBatch,
  type FitOptions,
} from '../../../../src/core/experience/learned/fit';
import type { SftPair } from '../../../../src/core/experience/learned/sft-data';
import { Tokenizer } from '../../../../src/core/experience/learned/tokenizer';
import type { Step } from '../../../../src/core/types';
import { SEGMENT_COUNT, type DecodeLimits } from '../../../../src/core/experience/learned/format';
import { DEFAULT_NETWORK } from '../../../../src/core/experience/learned/train-model';
import { SIZE_INFO } from '../../../../src/app/state/model/expmodel-settings';

export const TOY_CARD: DomainCard = {
  env: 'toy-v0',
  name: 'toy',
  text: 'A toy room.',
  abstraction: 'generic',
  showAdmissible: true,
};

export const TOY_FORMAT: FormatOptions = {
  ...DEFAULT_FORMAT_OPTIONS,
  answerStateTokens: 40,
  answerAdmissibleTokens: 24,
  stateTokens: 40,
};

export interface ToyStep {
  instruction: string;
  state: string;
  admissible: string[];
  action: string;
  answer: Answer;
}

export const TOY_STEPS: ToyStep[] = [
  {
    instruction: 'open the box',
    state: 'You see a box 1 and a key 7.',
    admissible: ['open box 1', 'take key 7'],
    action: 'open box 1',
    answer: {
      valid: true,
      terminated: true,
      reward: 1,
      observation: 'You open the box 1. It holds a coin B0X9Q2.',
      admissible: [],
    },
  },
  {
    instruction: 'take the key',
    state: 'You see a box 1 and a key 7.',
    admissible: ['open box 1', 'take key 7'],
    action: 'take key 7',
    answer: {
      valid: true,
      terminated: false,
      reward: 0,
      observation: 'You pick up the key 7.',
      admissible: ['open box 1', 'drop key 7'],
    },
  },
  {
    instruction: 'take the key',
    state: 'You pick up the key 7.',
    admissible: ['open box 1', 'drop key 7'],
    action: 'fly away',
    answer: { valid: false, terminated: false, reward: 0, observation: '', admissible: [] },
  },
  {
    instruction: 'buy a lamp under $30',
    state: 'Page 1 | B07ZZ1 | Brass Lamp | $25.99',
    admissible: ['click[b07zz1]'],
    action: 'click[b07zz1]',
    answer: {
      valid: true,
      terminated: false,
      reward: 0,
      observation: 'Brass Lamp | Price: $25.99',
      admissible: ['click[buy now]'],
    },
  },
];

export function toyTokenizer(): Tokenizer {
  const texts = TOY_STEPS.flatMap((s) => [
    s.instruction,
    s.state,
    s.action,
    s.answer.observation,
    ...s.admissible,
    ...s.answer.admissible,
  ]);
  return Tokenizer.learn(texts, { minCount: 1 });
}

export function toyPairs(tokenizer: Tokenizer, format: FormatOptions = TOY_FORMAT): SftPair[] {
  return TOY_STEPS.map((s, i) => ({
    kind: 'next',
    taskId: `task${i}`,
    episodeId: `episode${i}`,
    context: encodeContext(
      tokenizer,
      TOY_CARD,
      {
        task: { instruction: s.instruction },
        history: [],
        state: { text: s.state, admissible: s.admissible },
        action: s.action,
        retrieved: [],
      },
      format,
    ),
    prompt: encodePrompt(tokenizer, s.action),
    answer: encodeAnswer(tokenizer, s.answer, format),
  }));
}

/** The network of the Experience model page's 'tiny' size, the demo and test size. */
export const TINY_NETWORK = SIZE_INFO.tiny.network;

/** The tiny network with short contexts and answers (the toy's fit), or whatever `overrides` set. */
export function tinyConfig(vocabSize: number, overrides: Partial<NetworkConfig> = {}): NetworkConfig {
  const network = { ...DEFAULT_NETWORK, ...TINY_NETWORK, maxContext: 160, maxAnswer: 96 };
  return { ...network, vocabSize, segments: SEGMENT_COUNT, ...overrides };
}

export function tinyNetwork(tokenizer: Tokenizer, seed = 1, overrides: Partial<NetworkConfig> = {}): ExperienceNetwork {
  return ExperienceNetwork.create(tinyConfig(tokenizer.size, overrides), seed);
}

/** The toy network trained a little (40 epochs), so the rows' answers differ in length. */
export async function trainedToyNetwork(): Promise<{ tokenizer: Tokenizer; pairs: SftPair[]; net: ExperienceNetwork }> {
  const tokenizer = toyTokenizer();
  const pairs = toyPairs(tokenizer);
  const net = tinyNetwork(tokenizer, 11, { dModel: 24, selfDim: 8, attentionDim: 8 });
  await fitToy(net, tokenizer, pairs, { epochs: 40, batchSize: 4, warmupSteps: 5, seed: 2 });
  return { tokenizer, pairs, net };
}

/** Fits a toy network on `pairs` (no validation) at a high learning rate, never stopping early. */
export async function fitToy(
  net: ExperienceNetwork,
  tokenizer: Tokenizer,
  pairs: SftPair[],
  fit: Pick<FitOptions, 'epochs' | 'batchSize' | 'warmupSteps' | 'seed'>,
): ReturnType<typeof fitNetwork> {
  return fitNetwork(net, tokenizer, pairs, [], { ...DEFAULT_FIT_OPTIONS, learningRate: 1e-2, patience: 1000, ...fit });
}

/** Each pair's next state decoded (decodeBatch on their contexts and prompts, in one batch). */
export function decodeNext(
  net: ExperienceNetwork,
  tokenizer: Tokenizer,
  masks: ReturnType<typeof buildMasks>,
  pairs: readonly SftPair[],
  limits: DecodeLimits,
): Promise<Decoded[]> {
  const contexts = pairs.map((p) => p.context);
  return decodeBatch(
    net,
    tokenizer,
    masks,
    contexts,
    pairs.map((p) => p.prompt),
    pairs.map(() => 'next'),
    limits,
  );
}

/** The heads the network computes teacher-forced on `pairs`, read back, with the batch's sizes. */
export function teacherForcedHeads(net: ExperienceNetwork, tokenizer: Tokenizer, pairs: SftPair[]) {
  const batch = makeBatch(pairs, tokenizer);
  const full = net.teacherForced(batch);
  const [vocab, pointer, gate] = [full.vocab.dataSync(), full.pointer.dataSync(), full.gate.dataSync()];
  tf.dispose([full.vocab, full.pointer, full.gate]);
  return { batch, vocab, pointer, gate, V: tokenizer.size, Lc: batch.contextLength, P: pairs[0].prompt.ids.length };
}

/** A valid running step taken before the one asked about, as a context's history shows it. */
export function pastStep(action: string): Step {
  return { observation: '', admissible: [], action, reward: 0, terminated: false, truncated: false, valid: true };
}
