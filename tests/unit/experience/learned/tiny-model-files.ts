/** A tiny model's two files, made without training (weights filled by index): for tests of the files themselves. */
import { builtInDomainCard } from '../../../../src/core/experience/domain-card';
import { DEFAULT_FORMAT_OPTIONS, type FormatOptions } from '../../../../src/core/experience/learned/format';
import { encodeModelFiles, type TrainingRecord } from '../../../../src/core/experience/learned/model-file';
import type { NetworkConfig } from '../../../../src/core/experience/learned/network';
import { Tokenizer } from '../../../../src/core/experience/learned/tokenizer';
import { weightShapes, type NamedWeight } from '../../../../src/core/experience/learned/weights';
import { tinyConfig } from './fixtures';

const card = builtInDomainCard('webshop-lite-v0')!;
const tokenizer = Tokenizer.learn(['buy now thank you', 'search a red shirt'], { minCount: 1 });
const format: FormatOptions = {
  ...DEFAULT_FORMAT_OPTIONS,
  contextTokens: 160,
  answerStateTokens: 40,
  answerAdmissibleTokens: 24,
};

export function tinyModelConfig(): NetworkConfig {
  return tinyConfig(tokenizer.size);
}

/** Weights of the tiny network's shapes, filled by their index and `variant` (two variants: two different models). */
function tinyWeights(variant: number): NamedWeight[] {
  return weightShapes(tinyModelConfig()).map(([name, shape], w) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = ((i * 7 + w + variant) % 13) / 13 - 0.5;
    return { name, shape, data };
  });
}

/** The training record of a model made by hand (no data, no epochs). */
export function emptyTrainingRecord(): TrainingRecord {
  const data = { source: '', episodes: 0, trainEpisodes: 0, validationEpisodes: 0, trainPairs: 0, validationPairs: 0 };
  return {
    data: { ...data, heldOutDropped: 0 },
    seed: 0,
    epochs: [],
    bestEpoch: 0,
    bestValidationLoss: 0,
    seconds: 0,
    tokensPerSecond: 0,
    backend: 'wasm',
  };
}

export function tinyModelFiles(name = 'tiny', variant = 0): { manifest: string; weights: Uint8Array } {
  return encodeModelFiles(
    {
      name,
      env: 'webshop-lite-v0',
      card,
      network: tinyModelConfig(),
      formatOptions: format,
      tokenizer: tokenizer.toJSON(),
      training: emptyTrainingRecord(),
    },
    tinyWeights(variant),
  );
}
