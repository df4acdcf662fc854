/**
 * What the commands that dream share (dream, audit, domain train): the --llm option and its
 * usage errors, the experience model's settings (--k, --history, --no-reasoning), the engine's
 * transport settings (--set llmTimeoutMs=…,llmRetries=…,llmMaxFailures=…), --env, and the
 * experience model of a registered env built by the one run builder (src/core/train/run-parts.ts).
 * Commands that dream on a registered env (audit, dream) take one option set, `envModelOptions`,
 * and get their model from it with `envModelFromOptions`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { initBackend } from '../core/tfjs/backend';
import { parseTrajectoriesJsonl } from '../core/data/trajectory';
import type { Trajectory } from '../core/types';
import { bufferFromTrajectories } from '../core/experience/seed-buffer';
import type { ExperienceModel } from '../core/experience/types';
import { loadSeedDataset } from '../core/data/seed-datasets';
import { envIds, getEnvDefinition } from '../core/envs/registry';
import { formatLlmSpec, LlmSpecError, parseLlmSpec, type LlmSpec } from '../core/llm/spec';
import { buildRunParts } from '../core/train/run-parts';
import {
  ConfigError,
  LLM_SETTING_NAMES,
  TRAIN_DEFAULTS,
  validateSettings,
  type LlmSettings,
} from '../core/train/config';
import { parseSettings } from './settings';
import { nodeEngineDeps, readPublicFile } from '../node/edge';
import { UsageError, type CommandSpec, type OptionSpec } from './args';

export const LLM_OPTION_HELP =
  'experience model: oracle:EPS_R,EPS_P (noisy real env), openai:BASE_URL#MODEL (key from DREAMGYM_API_KEY, else OPENAI_API_KEY) or learned:PATH';

export interface ModelSettings {
  k: number;
  history: number;
  reasoning: boolean;
  seed: number;
  llm?: LlmSettings;
  dataset?: string;
}

/** --dataset: the offline trajectories that seed the replay buffer, instead of the env's shipped dataset. */
export const datasetOption = {
  type: 'string' as const,
  description:
    "offline trajectories (our JSONL) that seed the replay buffer the experience model retrieves from, instead of the env's shipped dataset (public/datasets/ENV.jsonl)",
};

/**
 * The offline trajectories of `envId`: those of `dataset` (our JSONL; a malformed file is refused
 * whole, with its lines) or, without one, the env's shipped dataset.
 */
export async function offlineTrajectories(
  envId: string,
  dataset: string | undefined,
  spec: CommandSpec,
): Promise<Trajectory[]> {
  if (dataset === undefined) return loadSeedDataset(envId, readPublicFile);
  if (!existsSync(dataset))
    throw new UsageError(
      `--dataset ${dataset}: no such file. Give a trajectory JSONL (dreamgym rollout --out, or npm run datasets -- --out DIR).`,
      spec,
    );
  const trajectories = parseTrajectoriesJsonl(readFileSync(dataset, 'utf8'), {
    knownEnvs: envIds(),
    sourceName: dataset,
  }).filter((t) => t.env === envId);
  if (trajectories.length === 0)
    throw new UsageError(
      `--dataset ${dataset} holds no episodes of '${envId}'; give a file with episodes of that environment.`,
      spec,
    );
  return trajectories;
}

export const experienceModelOptions = {
  k: {
    type: 'integer' as const,
    description: 'retrieved examples per dreamed step (0 = no retrieval)',
    default: 4,
    min: 0,
    max: 64,
  },
  history: {
    type: 'integer' as const,
    description: 'past steps shown to the model (0 = no history)',
    default: 4,
    min: 0,
    max: 100,
  },
  'no-reasoning': { type: 'boolean' as const, description: 'ask for no reasoning trace (the ablation)' },
  set: {
    type: 'string' as const,
    description: `engine settings ${LLM_SETTING_NAMES.join(', ')}, e.g. --set llmTimeoutMs=120000,llmRetries=4`,
  },
};

/** The engine settings of --set (the rest from TRAIN_DEFAULTS); a bad name or value is a usage error. */
export function llmSettingsOption(text: string | undefined, spec: CommandSpec): LlmSettings {
  const given = parseSettings(text, LLM_SETTING_NAMES, spec);
  try {
    validateSettings(given, LLM_SETTING_NAMES);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, spec);
    throw error;
  }
  const { llmTimeoutMs, llmRetries, llmConcurrency, llmMaxFailures } = TRAIN_DEFAULTS;
  return { llmTimeoutMs, llmRetries, llmConcurrency, llmMaxFailures, ...given };
}

export function parseLlmOption(text: string | undefined, spec: CommandSpec): LlmSpec {
  if (!text) throw new UsageError(`'${spec.name}' needs --llm (${LLM_OPTION_HELP}).`, spec);
  try {
    return parseLlmSpec(text);
  } catch (error) {
    if (error instanceof LlmSpecError) throw new UsageError(error.message, spec);
    throw error;
  }
}

function requireEnv(envId: string | undefined, spec: CommandSpec): string {
  if (!envId) throw new UsageError(`'${spec.name}' needs --env (an environment id, e.g. webshop-lite-v0).`, spec);
  getEnvDefinition(envId);
  return envId;
}

export function checkModelSettings(o: { k: number; history: number }, spec: CommandSpec): void {
  if (!(o.k >= 0)) throw new UsageError(`--k must be 0 or more (retrieved examples), got ${o.k}.`, spec);
  if (!(o.history >= 0))
    throw new UsageError(`--history must be 0 or more (past steps shown), got ${o.history}.`, spec);
}

/** The experience model a spec names for a registered env; a model that retrieves gets the shipped dataset as its buffer. */
async function buildEnvExperienceModel(
  llm: LlmSpec,
  envId: string,
  settings: ModelSettings,
  spec: CommandSpec,
): Promise<ExperienceModel> {
  // A learned model runs on tfjs: wasm (SIMD), as everywhere in Node.
  if (llm.kind === 'learned') await initBackend('wasm');
  // A --dataset is read (and checked) now, even for a model that does not retrieve.
  const given = settings.dataset === undefined ? null : await offlineTrajectories(envId, settings.dataset, spec);
  const { experienceModel } = await buildRunParts(
    {
      env: envId,
      llm: formatLlmSpec(llm),
      seed: settings.seed,
      retrievalK: settings.k,
      historyLength: settings.history,
      reasoning: settings.reasoning,
      ...settings.llm,
    },
    {
      ...nodeEngineDeps(),
      buffer: async () => bufferFromTrajectories(given ?? (await offlineTrajectories(envId, undefined, spec))),
    },
  );
  return experienceModel!;
}

/** The usage line's part for `envModelOptions` (after the command's own options). */
export const ENV_MODEL_USAGE =
  '[--k K] [--history H] [--no-reasoning] [--dataset FILE] [--set llmTimeoutMs=…] [--json]';

/**
 * The options of a command that dreams on a registered env (audit, dream): --env and --llm, the
 * command's own (`own`, which must hold --seed: the model's draws follow it), the experience
 * model's settings, --dataset, and --json (`json` says what it prints).
 */
export function envModelOptions(
  own: Record<string, OptionSpec> & { seed: OptionSpec },
  json: string,
): Record<string, OptionSpec> {
  return {
    env: { type: 'string', description: 'environment id' },
    llm: { type: 'string', description: LLM_OPTION_HELP },
    ...own,
    ...experienceModelOptions,
    dataset: datasetOption,
    json: { type: 'boolean', description: json },
  };
}

/** The parsed values of `envModelOptions` (the command's own options come on top). */
export type EnvModelValues = {
  env?: string;
  llm?: string;
  seed: number;
  k: number;
  history: number;
  'no-reasoning'?: boolean;
  set?: string;
  dataset?: string;
  json?: boolean;
};

/**
 * The env, the engine spec, the engine settings and the experience model of `envModelOptions`'
 * values; a missing or bad option is a usage error of `spec`.
 */
export async function envModelFromOptions(
  o: EnvModelValues,
  spec: CommandSpec,
): Promise<{ envId: string; llm: LlmSpec; settings: LlmSettings; model: ExperienceModel }> {
  const envId = requireEnv(o.env, spec);
  const llm = parseLlmOption(o.llm, spec);
  checkModelSettings(o, spec);
  const settings = llmSettingsOption(o.set, spec);
  const model = await buildEnvExperienceModel(
    llm,
    envId,
    {
      k: o.k,
      history: o.history,
      reasoning: !o['no-reasoning'],
      seed: o.seed,
      llm: settings,
      dataset: o.dataset,
    },
    spec,
  );
  return { envId, llm, settings, model };
}
