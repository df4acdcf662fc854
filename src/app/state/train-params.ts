/**
 * The Train page's settings, kept in the URL hash (`#/train?preset=…&mode=…`) so a run setup can
 * be shared (TensorFlow Playground style), and the TrainConfig they make. Plain logic, no Svelte.
 */
import { ALGORITHMS, MODES, PRESETS, getPreset, validateConfig, type Algorithm, type Mode, type TrainConfig } from '../../core/train/config';
import type { BackendName } from '../../core/policy/backend';

export interface TrainParams {
  env: string;
  preset: string;
  mode: Mode;
  algo: Algorithm;
  seed: number;
  /** Noisy oracle: reward error ε_R and transition error ε_P (dream and S2R modes). */
  epsR: number;
  epsP: number;
  /** Tasks per iteration and rollouts per task (GRPO's G): small values make a quick demo. */
  tasks: number;
  group: number;
  iterations: number;
  /** Evaluate on held-out real tasks every K iterations, with this many episodes. */
  evalEvery: number;
  evalEpisodes: number;
  /** tfjs backend the worker tries first ('' = the default, wasm). */
  backend: BackendName | '';
}

export const BACKENDS: readonly BackendName[] = ['wasm', 'webgl', 'webgpu', 'cpu'];

export function envIds(): string[] {
  return [...new Set(Object.values(PRESETS).map((p) => p.env))];
}

export function presetsFor(env: string): string[] {
  return Object.values(PRESETS).filter((p) => p.env === env).map((p) => p.preset);
}

/** The defaults a preset implies (its own iterations, batch and evaluation settings). */
export function paramsForPreset(preset: string, keep: Partial<TrainParams> = {}): TrainParams {
  const p = getPreset(preset);
  return {
    env: p.env, preset: p.preset, mode: p.mode, algo: p.algo, seed: p.seed, epsR: 0.1, epsP: 0.1,
    tasks: p.tasksPerIteration, group: p.groupSize, iterations: p.iterations, evalEvery: p.evalInterval,
    evalEpisodes: p.evalEpisodes, backend: '', ...keep,
  };
}

export const DEFAULT_PARAMS: TrainParams = paramsForPreset('webshop-easy');

/** A quick demo: 2 tasks × 4 rollouts per iteration, evaluation every 2 iterations on 10 episodes. */
export const TINY: Partial<TrainParams> = { tasks: 2, group: 4, evalEvery: 2, evalEpisodes: 10 };

function int(value: string | null, min: number, max: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

function num(value: string | null, min: number, max: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= min && n <= max ? n : undefined;
}

/** Reads the settings from a query string; unknown or bad values fall back to the preset's. */
export function paramsFromQuery(query: string): TrainParams {
  const q = new URLSearchParams(query);
  const presetName = q.get('preset') ?? '';
  const preset = presetName in PRESETS ? presetName : DEFAULT_PARAMS.preset;
  const base = paramsForPreset(preset, q.get('size') === 'tiny' ? TINY : {});
  const mode = q.get('mode');
  const algo = q.get('algo');
  const backend = q.get('backend');
  const pick = <T>(value: T | undefined, fallback: T): T => value === undefined ? fallback : value;
  return {
    ...base,
    mode: (MODES as readonly string[]).includes(mode ?? '') ? mode as Mode : base.mode,
    algo: (ALGORITHMS as readonly string[]).includes(algo ?? '') ? algo as Algorithm : base.algo,
    seed: pick(int(q.get('seed'), 0, 2 ** 31 - 1), base.seed),
    epsR: pick(num(q.get('epsR'), 0, 1), base.epsR),
    epsP: pick(num(q.get('epsP'), 0, 1), base.epsP),
    tasks: pick(int(q.get('tasks'), 1, 256), base.tasks),
    group: pick(int(q.get('group'), 1, 64), base.group),
    iterations: pick(int(q.get('iterations'), 1, 100_000), base.iterations),
    evalEvery: pick(int(q.get('evalEvery'), 0, 100_000), base.evalEvery),
    evalEpisodes: pick(int(q.get('evalEpisodes'), 1, 10_000), base.evalEpisodes),
    backend: (BACKENDS as readonly string[]).includes(backend ?? '') ? backend as BackendName : '',
  };
}

export function paramsToQuery(p: TrainParams): string {
  const q = new URLSearchParams({
    preset: p.preset, mode: p.mode, algo: p.algo, seed: String(p.seed), epsR: String(p.epsR), epsP: String(p.epsP),
    tasks: String(p.tasks), group: String(p.group), iterations: String(p.iterations), evalEvery: String(p.evalEvery),
    evalEpisodes: String(p.evalEpisodes),
  });
  if (p.backend) q.set('backend', p.backend);
  return q.toString();
}

/** The validated TrainConfig for these settings (throws ConfigError naming each bad field). */
export function configFromParams(p: TrainParams): TrainConfig {
  return validateConfig({
    ...getPreset(p.preset), mode: p.mode, algo: p.algo, seed: p.seed, llm: `oracle:${p.epsR},${p.epsP}`,
    tasksPerIteration: p.tasks, groupSize: p.group, iterations: p.iterations, evalInterval: p.evalEvery,
    evalEpisodes: p.evalEpisodes,
  } as unknown as Record<string, unknown>);
}

/** How the UI names where experience comes from; the oracle is always labelled as one. */
export function experienceLabel(mode: Mode, epsR: number, epsP: number): string {
  const oracle = `noisy oracle (ε_R=${epsR}, ε_P=${epsP}) — the real env with dialled errors, not a learned model`;
  if (mode === 'real') return 'the real environment (baseline RL)';
  if (mode === 'dream') return `dream: ${oracle}`;
  return `S2R: dream with the ${oracle}, then a small real budget`;
}
