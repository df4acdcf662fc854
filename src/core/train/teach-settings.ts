/**
 * Settings of a Teach session (see teach.ts) and the small training config they make. Kept apart
 * from teach.ts, which needs tfjs, so the page can validate settings without loading tfjs on the
 * main thread (the session itself runs in the teach worker).
 */
import { ConfigError, getPreset, validateConfig, type TrainConfig } from './config';

// =============================================================================================
// Settings
// =============================================================================================

/** The algorithms the teach view explains (REINFORCE has no group or value baseline to show). */
export const TEACH_ALGORITHMS = ['grpo', 'ppo'] as const;
export type TeachAlgorithm = (typeof TEACH_ALGORITHMS)[number];
export const TEACH_MODES = ['real', 'dream'] as const;
export type TeachMode = (typeof TEACH_MODES)[number];

/** Environment id → the small preset the teach view uses for it. */
export const TEACH_PRESETS: Readonly<Record<string, string>> = Object.freeze({
  'webshop-lite-v0': 'webshop-easy',
  'household-v0': 'household-easy',
  'webarena-lite-v0': 'webarena-easy',
});

export interface TeachSettings {
  /** An environment of TEACH_PRESETS. */
  env: string;
  algo: TeachAlgorithm;
  /** 'real' = the ground-truth env; 'dream' = the noisy oracle as the experience model. */
  mode: TeachMode;
  seed: number;
  /** Noisy oracle (dream mode): reward error ε_R and transition error ε_P, each 0..1. */
  epsR: number;
  epsP: number;
  /** Distinct tasks per update (1..4) and rollouts per task, GRPO's group size G (2..8). */
  tasks: number;
  group: number;
}

export const DEFAULT_TEACH_SETTINGS: Readonly<TeachSettings> = Object.freeze({
  env: 'webshop-lite-v0',
  algo: 'grpo',
  mode: 'real',
  seed: 1,
  epsR: 0.1,
  epsP: 0.1,
  tasks: 2,
  group: 4,
});

export const TEACH_LIMITS = Object.freeze({ tasks: [1, 4], group: [2, 8], seed: [0, 2 ** 31 - 1] } as const);

/** Checks settings; a bad value is a ConfigError naming the field, what was given and what is valid. */
export function validateTeachSettings(settings: TeachSettings): TeachSettings {
  const problems: string[] = [];
  if (!(settings.env in TEACH_PRESETS))
    problems.push(`'env' must be one of ${Object.keys(TEACH_PRESETS).join(', ')}; got ${JSON.stringify(settings.env)}`);
  if (!(TEACH_ALGORITHMS as readonly string[]).includes(settings.algo))
    problems.push(`'algo' must be one of ${TEACH_ALGORITHMS.join(', ')}; got ${JSON.stringify(settings.algo)}`);
  if (!(TEACH_MODES as readonly string[]).includes(settings.mode))
    problems.push(`'mode' must be one of ${TEACH_MODES.join(', ')}; got ${JSON.stringify(settings.mode)}`);
  const int = (name: 'seed' | 'tasks' | 'group') => {
    const [min, max] = TEACH_LIMITS[name];
    const v = settings[name];
    if (!Number.isInteger(v) || v < min || v > max)
      problems.push(`'${name}' must be an integer in ${min}..${max}; got ${JSON.stringify(v)}`);
  };
  int('seed');
  int('tasks');
  int('group');
  for (const name of ['epsR', 'epsP'] as const) {
    const v = settings[name];
    if (typeof v !== 'number' || !(v >= 0 && v <= 1))
      problems.push(`'${name}' must be a probability in 0..1; got ${JSON.stringify(v)}`);
  }
  if (problems.length) throw new ConfigError(`Invalid teach settings:\n- ${problems.join('\n- ')}`);
  return settings;
}

/** The training config of a teach session: the env's easy preset, small, no evaluation, no curriculum. */
export function teachConfig(settings: TeachSettings): TrainConfig {
  const s = validateTeachSettings(settings);
  return validateConfig({
    ...getPreset(TEACH_PRESETS[s.env]),
    algo: s.algo,
    mode: s.mode,
    seed: s.seed,
    llm: `oracle:${s.epsR},${s.epsP}`,
    tasksPerIteration: s.tasks,
    groupSize: s.group,
    curriculum: false,
    evalInterval: 0,
    iterations: 1_000_000,
  });
}
