/**
 * The Experience model page's settings (training the learned M_exp on the buffer's real data),
 * kept in the URL hash (`#/model?env=…&size=tiny…`, shareable). Plain logic, no Svelte, and no
 * tfjs (the worker turns them into core's LearnedTrainOptions: expmodel-host.ts trainOptions).
 */
import { DOMAIN_ENV_PREFIX } from '../../../core/domain/domain';
import { envIds } from '../../../core/envs/registry';
import { builtInDomainCard } from '../../../core/experience/domain-card';
import type { NetworkShape } from '../../../core/experience/learned/train-model';
import { modelNameProblem } from '../setup/learned-path';
import { queryInt, queryNum } from '../shared/query-values';

/** Which tfjs backend trains: 'auto' is WebGPU on a hardware adapter, wasm otherwise. */
export const BACKEND_PREFERENCES = ['auto', 'webgpu', 'wasm'] as const;
export type BackendPreference = (typeof BACKEND_PREFERENCES)[number];

export const MODEL_SIZES = ['tiny', 'small', 'standard'] as const;
export type ModelSize = (typeof MODEL_SIZES)[number];

/**
 * The sizes; their labels promise no time (the page estimates it from the chosen data and this
 * browser's measured speed: expmodel-estimate.ts).
 */
export const SIZE_INFO: Record<ModelSize, { label: string; network: Partial<NetworkShape>; warmupSteps?: number }> = {
  // A demo and test size: trains in seconds on a few episodes, and dreams poorly.
  tiny: {
    label: 'tiny (a demo, dreams poorly)',
    warmupSteps: 2,
    network: {
      dModel: 16,
      encoderBlocks: 1,
      kernel: 3,
      decoderLayers: 1,
      heads: 1,
      selfDim: 8,
      attentionDim: 8,
      ffMult: 2,
    },
  },
  small: { label: 'small (half the width of standard)', network: { dModel: 32, selfDim: 16, attentionDim: 16 } },
  // The shipped models' network (npm run models).
  standard: { label: "standard (the shipped models' size)", network: {} },
};

export interface ExpModelSettings {
  /** The environment whose real episodes are learned from (a built-in env: its domain card, and the audit's real env). */
  env: string;
  /** The model's name in this browser: `learned:local/<name>`. */
  name: string;
  size: ModelSize;
  epochs: number;
  /** At most this many training episodes (0 = all). */
  episodes: number;
  batchSize: number;
  learningRate: number;
  /** Retrieved examples and past actions in each context (0 = the ablations). */
  k: number;
  history: number;
  seed: number;
  backend: BackendPreference;
  /** Held-out real transitions audited after training, and dreamed-vs-real examples shown. */
  audit: number;
  samples: number;
  /** A domain's model only: the checksum of the training episodes it learns from (a resume on others is refused). */
  data?: string;
}

/** Environments the page can train for: registered ones with a domain card (ours). */
export function trainableEnvs(): string[] {
  return envIds().filter((env) => builtInDomainCard(env) !== undefined);
}

export function defaultSettings(env = trainableEnvs()[0] ?? 'webshop-lite-v0'): ExpModelSettings {
  return {
    env,
    name: `${env}-mine`,
    size: 'standard',
    epochs: 10,
    episodes: 0,
    batchSize: 16,
    learningRate: 2e-3,
    k: 4,
    history: 4,
    seed: 1,
    backend: 'auto',
    audit: 100,
    samples: 6,
  };
}

/** `size=tiny`: a tiny network on a few episodes for 2 epochs, a short audit (demos and tests). */
export const TINY_SETTINGS: Partial<ExpModelSettings> = {
  size: 'tiny',
  epochs: 2,
  episodes: 8,
  batchSize: 8,
  audit: 12,
  samples: 3,
};

/** Reads the settings from a query string; unknown or bad values fall back to the defaults. */
export function settingsFromQuery(query: string): ExpModelSettings {
  const q = new URLSearchParams(query);
  const envs = trainableEnvs();
  const env = envs.includes(q.get('env') ?? '') ? q.get('env')! : envs[0];
  const size = (MODEL_SIZES as readonly string[]).includes(q.get('size') ?? '')
    ? (q.get('size') as ModelSize)
    : 'standard';
  const base = { ...defaultSettings(env), ...(size === 'tiny' ? TINY_SETTINGS : { size }) };
  const name = q.get('name');
  const backend = q.get('backend');
  const pick = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
  return {
    ...base,
    name: name !== null && modelNameProblem(name) === null ? name : base.name,
    epochs: pick(queryInt(q.get('epochs'), 1, 200), base.epochs),
    episodes: pick(queryInt(q.get('episodes'), 0, 1_000_000), base.episodes),
    batchSize: pick(queryInt(q.get('batch'), 1, 256), base.batchSize),
    learningRate: pick(queryNum(q.get('lr'), 1e-6, 1), base.learningRate),
    k: pick(queryInt(q.get('k'), 0, 16), base.k),
    history: pick(queryInt(q.get('history'), 0, 16), base.history),
    seed: pick(queryInt(q.get('seed'), 0, 2 ** 31 - 1), base.seed),
    backend: (BACKEND_PREFERENCES as readonly string[]).includes(backend ?? '')
      ? (backend as BackendPreference)
      : base.backend,
    audit: pick(queryInt(q.get('audit'), 0, 2000), base.audit),
    samples: pick(queryInt(q.get('samples'), 0, 50), base.samples),
  };
}

export function settingsToQuery(s: ExpModelSettings): string {
  return new URLSearchParams({
    env: s.env,
    name: s.name,
    size: s.size,
    epochs: String(s.epochs),
    episodes: String(s.episodes),
    batch: String(s.batchSize),
    lr: String(s.learningRate),
    k: String(s.k),
    history: String(s.history),
    seed: String(s.seed),
    backend: s.backend,
    audit: String(s.audit),
    samples: String(s.samples),
  }).toString();
}

/** Every problem with the settings, in words (empty when they can train). */
export function settingsProblems(s: ExpModelSettings): string[] {
  const out: string[] = [];
  const domain = s.env.startsWith(DOMAIN_ENV_PREFIX) ? s.env.slice(DOMAIN_ENV_PREFIX.length) : null;
  if (domain !== null ? domain === '' : !trainableEnvs().includes(s.env))
    out.push(
      `'${s.env}' is not one of our environments (${trainableEnvs().join(', ')}) nor an imported domain ` +
        `(${DOMAIN_ENV_PREFIX}NAME); the page trains models for those.`,
    );
  const name = modelNameProblem(s.name);
  if (name) out.push(name);
  const ranges: [keyof ExpModelSettings, number, number, boolean][] = [
    ['epochs', 1, 200, true],
    ['episodes', 0, 1_000_000, true],
    ['batchSize', 1, 256, true],
    ['k', 0, 16, true],
    ['history', 0, 16, true],
    ['seed', 0, 2 ** 31 - 1, true],
    ['audit', 0, 2000, true],
    ['samples', 0, 50, true],
    ['learningRate', 1e-6, 1, false],
  ];
  for (const [key, min, max, integer] of ranges) {
    const v = s[key] as number;
    if (!(Number.isFinite(v) && v >= min && v <= max && (!integer || Number.isInteger(v))))
      out.push(`'${key}' must be ${integer ? 'an integer' : 'a number'} in ${min}..${max}; got ${v}.`);
  }
  return out;
}
