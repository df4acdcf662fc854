/**
 * The Train page's settings, kept in the URL hash (`#/train?preset=…&mode=…`) so a run setup can
 * be shared (TensorFlow Playground style), and the TrainConfig they make. Plain logic, no Svelte.
 */
import {
  ALGORITHMS,
  MODES,
  PRESETS,
  getPreset,
  validateConfig,
  type Algorithm,
  type Mode,
  type TrainConfig,
} from '../../../core/train/config';
import type { BackendName } from '../../../core/tfjs/backend';
import { parseLlmSpec, type LlmSpecText } from '../../../core/llm/spec';
import { learnedPathOfSpec, learnedSpec } from '../setup/learned-path';
import type { EngineRuntime } from '../../workers/trainer/experience-source';
import { queryInt, queryNum } from '../shared/query-values';

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
  /** The experience model: '' = the noisy oracle with epsR/epsP; else an engine spec (state/setup/engine.ts), e.g. 'wllama:file:x.gguf'. */
  llm: string;
  /** Curriculum task generator on, and its cap λ on the share of synthetic tasks. */
  curriculum: boolean;
  lambda: number;
  /** Curriculum groups: each task's rollouts, or clusters of similar tasks (the paper's PPO grouping). */
  grouping: 'task' | 'cluster';
  /** Where variations come from: mutateTask, the LLM (dream-only tasks), or both. */
  variations: 'procedural' | 'llm' | 'both';
  /** Retrieved examples per dreamed step (0 = the no-retrieval ablation). */
  k: number;
  /** History steps in the prompt (0 = the no-history ablation). */
  history: number;
  /** Reason before predicting (off = the no-reasoning ablation). */
  reasoning: boolean;
  /** The LLM as the agent's prior (off = the no-LLM-prior ablation; needs a language model). */
  prior: boolean;
  /** Token budget of one dreamed answer, and retries after an unusable one (LLM engines). */
  answerTokens: number;
  retries: number;
  /** The dream's pessimism (config.ts): the verdict ensemble's members (1 = no ensemble; learned models). */
  members: number;
  /** The halt (MOReL; not the oracle), its success quantile, its offers filter and its redraws. */
  halt: boolean;
  haltSuccessQ: number;
  offers: boolean;
  redraws: number;
  /** Dreams begun at real states: their share of a dream's tasks, and their horizon (0: the step limit). */
  realShare: number;
  realHorizon: number;
  /** S2R that corrects the dream: the share of the real budget spent replaying claimed successes (learned models). */
  correct: number;
}

export const BACKENDS: readonly BackendName[] = ['wasm', 'webgl', 'webgpu', 'cpu'];

export function envIds(): string[] {
  return [...new Set(Object.values(PRESETS).map((p) => p.env))];
}

export function presetsFor(env: string): string[] {
  return Object.values(PRESETS)
    .filter((p) => p.env === env)
    .map((p) => p.preset);
}

/** The defaults a preset implies (its own iterations, batch and evaluation settings). */
export function paramsForPreset(preset: string, keep: Partial<TrainParams> = {}): TrainParams {
  const p = getPreset(preset);
  return {
    env: p.env,
    preset: p.preset,
    mode: p.mode,
    algo: p.algo,
    seed: p.seed,
    epsR: 0.1,
    epsP: 0.1,
    tasks: p.tasksPerIteration,
    group: p.groupSize,
    iterations: p.iterations,
    evalEvery: p.evalInterval,
    evalEpisodes: p.evalEpisodes,
    backend: '',
    llm: '',
    curriculum: p.curriculum,
    lambda: p.lambda,
    grouping: p.curriculumGrouping,
    variations: p.curriculumVariations,
    k: p.retrievalK,
    history: p.historyLength,
    reasoning: p.reasoning,
    prior: p.llmPrior,
    answerTokens: 400,
    retries: 2,
    members: p.verdictMembers,
    halt: p.halt,
    haltSuccessQ: p.haltSuccessQuantile,
    offers: p.haltOffers,
    redraws: p.haltRedraws,
    realShare: p.realStartShare,
    realHorizon: p.realStartHorizon,
    correct: p.s2rCorrectFraction,
    ...keep,
  };
}

export const DEFAULT_PARAMS: TrainParams = paramsForPreset('webshop-easy');

/** A quick demo: 2 tasks × 4 rollouts per iteration, evaluation every 2 iterations on 10 episodes. */
export const TINY: Partial<TrainParams> = { tasks: 2, group: 4, evalEvery: 2, evalEpisodes: 10 };

/** The LLM demo preset of an env (config.ts: a few thousand dreamed transitions, tuned with the noisy oracle), if it has one. */
export function llmDemoPreset(env: string): string | null {
  const name = presetsFor(env).find((n) => n.endsWith('-llm-demo'));
  return name ?? null;
}

/** The LLM demo's answer budget: enough for one compact answer, one retry. */
export const LLM_DEMO_ANSWERS: Pick<TrainParams, 'answerTokens' | 'retries'> = { answerTokens: 256, retries: 1 };

/**
 * "Tiny demo size": with a language model, the env's LLM demo preset (its iterations, batch and
 * algorithm) and a small answer budget, keeping the engine, mode and seed; with the oracle or a
 * learned model (fast engines), the same preset with a small batch (TINY).
 */
export function tinyParams(p: TrainParams): TrainParams {
  const demo = llmDemoPreset(p.env);
  if (engineAbilities(p.llm).kind !== 'llm' || !demo) return { ...p, ...TINY };
  const kept = {
    mode: p.mode === 'real' ? ('dream' as const) : p.mode,
    seed: p.seed,
    epsR: p.epsR,
    epsP: p.epsP,
    llm: p.llm,
    backend: p.backend,
    k: p.k,
    history: p.history,
    reasoning: p.reasoning,
    prior: p.prior,
  };
  return { ...paramsForPreset(demo, kept), ...LLM_DEMO_ANSWERS };
}

/** A link's value, or the fallback where it had none (or a bad one). */
function pick<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

function flag(value: string | null): boolean | undefined {
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return undefined;
}

/** A non-oracle engine spec as given, or '' (the oracle, or a spec that does not parse). */
function engineParam(value: string | null): string {
  if (!value) return '';
  try {
    return parseLlmSpec(value).kind === 'oracle' ? '' : value.trim();
  } catch {
    return '';
  }
}

/** The noisy oracle of an llm= value, or null (another engine, or a spec that does not parse). */
function oracleOf(value: string | null): { epsilonReward: number; epsilonTransition: number } | null {
  if (!value) return null;
  try {
    const spec = parseLlmSpec(value);
    return spec.kind === 'oracle' ? spec : null;
  } catch {
    return null;
  }
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
  const chosenMode = (MODES as readonly string[]).includes(mode ?? '') ? (mode as Mode) : base.mode;
  // A link's llm=oracle:ε_R,ε_P is the oracle; its ε count where the link has no epsR / epsP of its own.
  const oracle = oracleOf(q.get('llm'));
  return {
    ...base,
    mode: chosenMode,
    algo: (ALGORITHMS as readonly string[]).includes(algo ?? '') ? (algo as Algorithm) : base.algo,
    seed: pick(queryInt(q.get('seed'), 0, 2 ** 31 - 1), base.seed),
    epsR: pick(queryNum(q.get('epsR'), 0, 1), oracle?.epsilonReward ?? base.epsR),
    epsP: pick(queryNum(q.get('epsP'), 0, 1), oracle?.epsilonTransition ?? base.epsP),
    tasks: pick(queryInt(q.get('tasks'), 1, 256), base.tasks),
    group: pick(queryInt(q.get('group'), 1, 64), base.group),
    iterations: pick(queryInt(q.get('iterations'), 1, 100_000), base.iterations),
    evalEvery: pick(queryInt(q.get('evalEvery'), 0, 100_000), base.evalEvery),
    evalEpisodes: pick(queryInt(q.get('evalEpisodes'), 1, 10_000), base.evalEpisodes),
    backend: (BACKENDS as readonly string[]).includes(backend ?? '') ? (backend as BackendName) : '',
    llm: engineParam(q.get('llm')),
    // On by default in dream and S2R (as the CLI and the README say); a link's curriculum=0/1 wins.
    curriculum: pick(flag(q.get('curriculum')), base.curriculum || chosenMode !== 'real'),
    lambda: pick(queryNum(q.get('lambda'), 0, 1), base.lambda),
    grouping: q.get('grouping') === 'cluster' ? 'cluster' : q.get('grouping') === 'task' ? 'task' : base.grouping,
    variations: (['procedural', 'llm', 'both'] as const).find((v) => v === q.get('variations')) ?? base.variations,
    k: pick(queryInt(q.get('k'), 0, 64), base.k),
    history: pick(queryInt(q.get('history'), 0, 100), base.history),
    reasoning: pick(flag(q.get('reasoning')), base.reasoning),
    prior: pick(flag(q.get('prior')), base.prior),
    answerTokens: pick(queryInt(q.get('tokens'), 16, 8192), base.answerTokens),
    retries: pick(queryInt(q.get('retries'), 0, 10), base.retries),
    ...pessimismFromQuery(q, base),
  };
}

/** The dream's pessimism settings of a link; bad values fall back to the preset's (as config.ts bounds them). */
function pessimismFromQuery(q: URLSearchParams, base: TrainParams): Partial<TrainParams> {
  return {
    members: pick(queryInt(q.get('members'), 1, 64), base.members),
    halt: pick(flag(q.get('halt')), base.halt),
    haltSuccessQ: pick(queryNum(q.get('haltSq'), 0.5, 1), base.haltSuccessQ),
    offers: pick(flag(q.get('offers')), base.offers),
    redraws: pick(queryInt(q.get('redraws'), 0, 16), base.redraws),
    realShare: pick(queryNum(q.get('realShare'), 0, 1), base.realShare),
    realHorizon: pick(queryInt(q.get('realHorizon'), 0, 1000), base.realHorizon),
    correct: pick(queryNum(q.get('correct'), 0, 1), base.correct),
  };
}

export function paramsToQuery(p: TrainParams): string {
  const q = new URLSearchParams({
    preset: p.preset,
    mode: p.mode,
    algo: p.algo,
    seed: String(p.seed),
    epsR: String(p.epsR),
    epsP: String(p.epsP),
    tasks: String(p.tasks),
    group: String(p.group),
    iterations: String(p.iterations),
    evalEvery: String(p.evalEvery),
    evalEpisodes: String(p.evalEpisodes),
  });
  if (p.backend) q.set('backend', p.backend);
  // Always the engine, the oracle too: a link without one dreams with the opener's Setup choice (train.svelte.ts).
  q.set('llm', p.llm || `oracle:${p.epsR},${p.epsP}`);
  q.set('curriculum', p.curriculum ? '1' : '0');
  q.set('lambda', String(p.lambda));
  q.set('grouping', p.grouping);
  q.set('variations', p.variations);
  q.set('k', String(p.k));
  q.set('history', String(p.history));
  q.set('reasoning', p.reasoning ? '1' : '0');
  q.set('prior', p.prior ? '1' : '0');
  q.set('tokens', String(p.answerTokens));
  q.set('retries', String(p.retries));
  q.set('members', String(p.members));
  q.set('halt', p.halt ? '1' : '0');
  q.set('haltSq', String(p.haltSuccessQ));
  q.set('offers', p.offers ? '1' : '0');
  q.set('redraws', String(p.redraws));
  q.set('realShare', String(p.realShare));
  q.set('realHorizon', String(p.realHorizon));
  q.set('correct', String(p.correct));
  return q.toString();
}

/**
 * The form's settings of a saved run's config (a run started from the start-here page has no
 * query): reopening it on Train shows the settings it ran with. The noisy oracle's ε come back as
 * ε_R, ε_P with the engine left at '' (the form's "noisy oracle").
 */
export function paramsFromConfig(config: TrainConfig): TrainParams {
  const base = paramsForPreset(config.preset in PRESETS ? config.preset : DEFAULT_PARAMS.preset, {});
  let llm = '';
  let epsR = base.epsR,
    epsP = base.epsP;
  try {
    const spec = parseLlmSpec(config.llm);
    if (spec.kind === 'oracle') {
      epsR = spec.epsilonReward;
      epsP = spec.epsilonTransition;
    } else llm = config.llm;
  } catch {
    llm = config.llm;
  }
  return {
    ...base,
    env: config.env,
    mode: config.mode,
    algo: config.algo,
    seed: config.seed,
    epsR,
    epsP,
    llm,
    tasks: config.tasksPerIteration,
    group: config.groupSize,
    iterations: config.iterations,
    evalEvery: config.evalInterval,
    evalEpisodes: config.evalEpisodes,
    curriculum: config.curriculum,
    lambda: config.lambda,
    grouping: config.curriculumGrouping,
    variations: config.curriculumVariations,
    k: config.retrievalK,
    history: config.historyLength,
    reasoning: config.reasoning,
    prior: config.llmPrior,
    members: config.verdictMembers,
    halt: config.halt,
    haltSuccessQ: config.haltSuccessQuantile,
    offers: config.haltOffers,
    redraws: config.haltRedraws,
    realShare: config.realStartShare,
    realHorizon: config.realStartHorizon,
    correct: config.s2rCorrectFraction,
  };
}

/** A mode change in the form: into dream or S2R turns the curriculum on (their default), back to real turns it to the preset's. */
export function withMode(p: TrainParams, mode: Mode): TrainParams {
  if (mode === p.mode) return p;
  const curriculum =
    p.mode === 'real' && mode !== 'real'
      ? true
      : mode === 'real' && p.mode !== 'real'
        ? paramsForPreset(p.preset, {}).curriculum
        : p.curriculum;
  return { ...p, mode, curriculum };
}

/**
 * Another preset in the form, keeping `keep` (the mode, seed, engine…): in dream or S2R the
 * curriculum stays on (their default), as a mode change and a link would have it.
 */
export function withPreset(preset: string, keep: Partial<TrainParams>): TrainParams {
  const next = paramsForPreset(preset, keep);
  return next.mode === 'real' ? next : { ...next, curriculum: true };
}

/** The validated TrainConfig for these settings (throws ConfigError naming each bad field). */
export function configFromParams(p: TrainParams): TrainConfig {
  return validateConfig({
    ...getPreset(p.preset),
    mode: p.mode,
    algo: p.algo,
    seed: p.seed,
    llm: llmSpec(p),
    tasksPerIteration: p.tasks,
    groupSize: p.group,
    iterations: p.iterations,
    evalInterval: p.evalEvery,
    // The page's one 'eval episodes' setting sizes every evaluation, the final one (after the last
    // iteration) too: with the LLM prior on, each held-out step is a model call.
    evalEpisodes: p.evalEpisodes,
    finalEvalEpisodes: p.evalEpisodes,
    curriculum: p.curriculum,
    lambda: p.lambda,
    curriculumGrouping: p.grouping,
    // LLM variations need a chat model and a dream (the form greys the choice out otherwise).
    curriculumVariations: engineAbilities(p.llm).chat && p.mode !== 'real' ? p.variations : 'procedural',
    retrievalK: p.k,
    historyLength: p.history,
    reasoning: p.reasoning,
    llmPrior: p.prior,
    verdictMembers: p.members,
    halt: p.halt,
    haltSuccessQuantile: p.haltSuccessQ,
    haltOffers: p.offers,
    haltRedraws: p.redraws,
    realStartShare: p.realShare,
    realStartHorizon: p.realHorizon,
    // Correcting the dream refits a learned model's verdict in an S2R run (the form greys it out otherwise).
    s2rCorrectFraction: canCorrect(p) ? p.correct : 0,
  } as unknown as Record<string, unknown>);
}

/** Whether these settings can correct the dream: S2R with a learned experience model. */
export function canCorrect(p: Pick<TrainParams, 'mode' | 'llm'>): boolean {
  return p.mode === 's2r' && engineAbilities(p.llm).kind === 'learned';
}

/** config.llm for these settings: the engine spec, or the noisy oracle with ε_R, ε_P (throws LlmSpecError for a bad spec). */
export function llmSpec(p: Pick<TrainParams, 'llm' | 'epsR' | 'epsP'>): LlmSpecText {
  if (!p.llm) return `oracle:${p.epsR},${p.epsP}`;
  parseLlmSpec(p.llm);
  return p.llm as LlmSpecText;
}

/** What the chosen dream engine can use of the form (the page greys out the rest and says why). */
export interface EngineAbilities {
  kind: 'oracle' | 'learned' | 'llm';
  /** A chat model: reasoning, the answer budget, the LLM prior and LLM-written variations apply. */
  chat: boolean;
  /** Reads retrieved examples and history (k, H). */
  context: boolean;
  /** Why the chat-only settings do not apply ('' for a chat model). */
  reason: string;
}

/** The abilities of `llm` ('' is the noisy oracle; a spec that does not parse counts as a chat model: its error shows elsewhere). */
export function engineAbilities(llm: string): EngineAbilities {
  let kind: EngineAbilities['kind'] = 'llm';
  if (!llm) kind = 'oracle';
  else {
    try {
      const parsed = parseLlmSpec(llm).kind;
      kind = parsed === 'oracle' ? 'oracle' : parsed === 'learned' ? 'learned' : 'llm';
    } catch {
      /* shown as the spec's error */
    }
  }
  if (kind === 'oracle') {
    return {
      kind,
      chat: false,
      context: false,
      reason:
        'The noisy oracle is the real environment with dialled errors, not a language model: ' +
        'retrieval, history, reasoning, the answer budget, the LLM prior and LLM-written variations do not apply.',
    };
  }
  if (kind === 'learned') {
    return {
      kind,
      chat: false,
      context: true,
      reason:
        'The learned experience model is a small tfjs network trained on the buffer, not a chat model: ' +
        'the LLM prior, LLM-written variations, reasoning and the answer budget do not apply (k and H count up to what it was trained with).',
    };
  }
  return { kind, chat: true, context: true, reason: '' };
}

/** The settings with another dream engine; a non-chat engine turns the LLM prior off and the variations procedural. */
export function withEngine(p: TrainParams, llm: string): TrainParams {
  const next = { ...p, llm };
  if (engineAbilities(llm).chat) return next;
  return { ...next, prior: false, variations: 'procedural' };
}

/**
 * The engine to keep when the run's environment changes: a learned model belongs to its env, so
 * the shipped one follows the new env and one trained here is dropped (back to the oracle).
 */
export function engineForEnv(llm: string, env: string): string {
  const path = learnedPathOfSpec(llm);
  if (!path) return llm;
  return path.where === 'shipped' ? learnedSpec({ where: 'shipped', env }) : '';
}

/** Why these settings cannot start (a chat-only setting with an engine that is not a chat model), or null. */
export function engineConflict(p: Pick<TrainParams, 'llm' | 'prior'>): string | null {
  const abilities = engineAbilities(p.llm);
  if (p.prior && !abilities.chat) {
    return `The LLM prior needs a chat model, and the chosen engine is not one. ${abilities.reason} Turn "LLM prior" off, or pick a language model (Setup, then the Dream engine list).`;
  }
  return null;
}

/** The start request's engine extras these settings imply (the page adds the API key, file, context). */
export function engineRuntimeFromParams(p: Pick<TrainParams, 'answerTokens' | 'retries'>): EngineRuntime {
  return { maxTokens: p.answerTokens, retries: p.retries };
}

/**
 * Tokens the dream has cost so far, from the iteration metrics: Σ over iterations of
 * dream/tokens_per_transition × the dream steps of that iteration (no-op steps the model was not
 * asked about are counted too, so this is an upper estimate). 0 without dream iterations.
 */
export function dreamTokenEstimate(
  iterations: readonly number[],
  values: Record<string, readonly (number | null)[]>,
): number {
  const perTransition = values['dream/tokens_per_transition'] ?? [];
  const dreamSteps = values['budget/dream_steps'] ?? [];
  let total = 0;
  let previous = 0;
  for (let i = 0; i < iterations.length; i++) {
    const steps = dreamSteps[i];
    if (steps === null || steps === undefined) continue;
    const tokens = perTransition[i];
    if (tokens !== null && tokens !== undefined && steps > previous) total += tokens * (steps - previous);
    previous = steps;
  }
  return Math.round(total);
}

/**
 * The Dream tokens counter: tokens are a language model's cost, so the figure is shown for a chat
 * model only; a learned model's decoder tokens are its own small ones (issue 46 saw "Dream tokens
 * ≈ 3,531,596" for one) and are said as such, and the oracle or a real run has none.
 */
export function dreamTokensCell(engine: EngineAbilities['kind'], tokens: number): { value: string; note: string } {
  if (engine === 'llm')
    return { value: `≈ ${tokens.toLocaleString('en-US')}`, note: 'tokens per dreamed transition × dream steps' };
  return {
    value: '—',
    note:
      engine === 'learned'
        ? `no language model: the learned model decodes its own small tokens (≈ ${tokens.toLocaleString('en-US')})`
        : 'no language model in this run',
  };
}
