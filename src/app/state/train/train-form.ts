/**
 * The Train form's settings as tables (plain logic, unit-tested in Node): each number or checkbox
 * the page renders in one loop, with the rule that greys it out where the mode or the dream engine
 * does not use it, and the Dream engine list beyond the oracle.
 */
import { engineLabel } from '../setup/engine';
import { parseLlmSpec } from '../../../core/llm/spec';
import { canCorrect, type EngineAbilities, type TrainParams } from './train-params';

/** What decides whether a setting applies: the form's settings and its dream engine's abilities. */
export interface FieldContext {
  params: TrainParams;
  abilities: EngineAbilities;
}

type KeysOf<T> = { [K in keyof TrainParams]: TrainParams[K] extends T ? K : never }[keyof TrainParams];

/** One setting of the form: a number input or a checkbox, off (greyed out and disabled) where `off` says. */
export type ParamField =
  | {
      kind: 'number';
      key: KeysOf<number>;
      label: string;
      min: number;
      max?: number;
      step: number;
      off?: (c: FieldContext) => boolean;
    }
  | { kind: 'check'; key: KeysOf<boolean>; label: string; off?: (c: FieldContext) => boolean };

const count = (key: KeysOf<number>, label: string, min: number): ParamField => ({
  kind: 'number',
  key,
  label,
  min,
  step: 1,
});

/** The run's size and seed (Run settings, after Algorithm). */
export const SIZE_FIELDS: readonly ParamField[] = [
  count('seed', 'Seed', 0),
  count('tasks', 'Tasks / iteration', 1),
  count('group', 'Rollouts / task (G)', 1),
  count('iterations', 'Iterations', 1),
  count('evalEvery', 'Eval every', 0),
  count('evalEpisodes', 'Eval episodes', 1),
];

const notOracleDream = ({ params, abilities }: FieldContext) => params.mode === 'real' || abilities.kind !== 'oracle';
const notChat = ({ abilities }: FieldContext) => !abilities.chat;
const noContext = ({ abilities }: FieldContext) => !abilities.context;
const noCurriculum = ({ params }: FieldContext) => !params.curriculum;

/** The ablations and the curriculum's share, before the curriculum's two lists (the paper's Table 2). */
export const ABLATION_FIELDS: readonly ParamField[] = [
  { kind: 'number', key: 'epsR', label: 'Oracle ε_R', min: 0, max: 1, step: 0.05, off: notOracleDream },
  { kind: 'number', key: 'epsP', label: 'Oracle ε_P', min: 0, max: 1, step: 0.05, off: notOracleDream },
  { kind: 'number', key: 'answerTokens', label: 'Answer tokens', min: 16, max: 8192, step: 16, off: notChat },
  { kind: 'number', key: 'retries', label: 'Retries', min: 0, max: 10, step: 1, off: notChat },
  { kind: 'number', key: 'k', label: 'Retrieval k', min: 0, max: 64, step: 1, off: noContext },
  { kind: 'number', key: 'history', label: 'History H', min: 0, max: 100, step: 1, off: noContext },
  { kind: 'check', key: 'reasoning', label: 'Reasoning', off: notChat },
  { kind: 'check', key: 'curriculum', label: 'Curriculum' },
  { kind: 'number', key: 'lambda', label: 'λ (synthetic share)', min: 0, max: 1, step: 0.05, off: noCurriculum },
];

/** The LLM prior, after the curriculum's lists. */
export const PRIOR_FIELD: ParamField = { kind: 'check', key: 'prior', label: 'LLM prior', off: notChat };

/** The halt needs an engine other than the oracle (the oracle is the real env: nothing is unfamiliar). */
const haltOff = ({ params, abilities }: FieldContext) => !(params.halt && abilities.kind !== 'oracle');

/** The dream's pessimism: the verdict ensemble, the halt, real starts and S2R's correction. */
export const PESSIMISM_FIELDS: readonly ParamField[] = [
  {
    kind: 'number',
    key: 'members',
    label: 'Verdict ensemble',
    min: 1,
    max: 64,
    step: 1,
    off: ({ abilities }) => abilities.kind !== 'learned',
  },
  { kind: 'check', key: 'halt', label: 'Halt on the unfamiliar', off: ({ abilities }) => abilities.kind === 'oracle' },
  { kind: 'number', key: 'haltSuccessQ', label: 'Success quantile', min: 0.5, max: 1, step: 0.01, off: haltOff },
  { kind: 'check', key: 'offers', label: 'Offers backed by data', off: haltOff },
  { kind: 'number', key: 'redraws', label: 'Redraws', min: 0, max: 16, step: 1, off: haltOff },
  { kind: 'number', key: 'realShare', label: 'Real-start share', min: 0, max: 1, step: 0.05 },
  {
    kind: 'number',
    key: 'realHorizon',
    label: 'Real-start horizon',
    min: 0,
    max: 1000,
    step: 1,
    off: ({ params }) => !(params.realShare > 0),
  },
  {
    kind: 'number',
    key: 'correct',
    label: 'S2R correction share',
    min: 0,
    max: 1,
    step: 0.05,
    off: ({ params }) => !canCorrect(params),
  },
];

/** A spec's label as Setup names it, or why the spec does not parse. */
export function specLabel(spec: string): string {
  try {
    return engineLabel(parseLlmSpec(spec));
  } catch (error) {
    return (error as Error).message;
  }
}

export interface EngineOption {
  spec: string;
  label: string;
}

/** The Dream engine list beyond the oracle: Setup's choice, the learned models of the env, the link's own engine. */
export function dreamEngineOptions(setupSpec: string, learned: readonly EngineOption[], llm: string): EngineOption[] {
  const out: EngineOption[] = [];
  if (setupSpec) out.push({ spec: setupSpec, label: `${specLabel(setupSpec)} (chosen on Setup)` });
  for (const o of learned) if (!out.some((x) => x.spec === o.spec)) out.push({ spec: o.spec, label: o.label });
  if (llm && !out.some((x) => x.spec === llm)) out.push({ spec: llm, label: specLabel(llm) });
  return out;
}
