/**
 * Setup's "Try one step" (docs/architecture.md §9.1: state here, the page renders): the chosen engine predicts
 * one transition from a real state of the chosen environment, in the trainer worker (the engine is
 * loaded there as for a run and stays loaded), beside what the real environment returns. The
 * measured time and tokens are kept (engine-speed.ts) for the Train page's cost estimate.
 */
import { getPreset, validateConfig, type TrainConfig } from '../../../core/train/config';
import type { TryStepResult } from '../../../core/experience/try-step';
import { outcomeOf, predictedOutcome } from '../../../core/experience/types';
import type { EngineSetup } from './engine.svelte';
import type { TrainSession } from '../train/train.svelte';
import { engineRuntimeFromParams, envIds, presetsFor, type TrainParams } from '../train/train-params';
import { recordSpeed } from './engine-speed';
import { diffText } from '../inspect/inspect-logic';
import type { DreamAnswer } from '../../../core/types';

/** The dreamed verdicts beside the real ones, for the result's table (plain logic). */
export interface VerdictRow {
  what: string;
  dreamed: string;
  real: string;
  agrees: boolean;
}

export function verdictRows(r: TryStepResult): VerdictRow[] {
  const p = r.prediction;
  if (!p.valid)
    return [
      {
        what: 'Answer',
        dreamed: `unusable: ${p.invalidReason ?? 'no reason given'}`,
        real: r.real.valid ? 'the action is accepted' : 'the action is refused',
        agrees: false,
      },
    ];
  const yes = (b: boolean) => (b ? 'yes' : 'no');
  return [
    {
      what: 'Action valid',
      dreamed: yes(p.actionValid),
      real: yes(r.real.valid),
      agrees: p.actionValid === r.real.valid,
    },
    {
      what: 'Reward',
      dreamed: `${+p.reward.toFixed(3)}${p.terminated ? (predictedOutcome(p) ? ' (success)' : ' (failure)') : ''}`,
      real: String(r.real.reward),
      agrees: predictedOutcome(p) === outcomeOf(r.real.reward),
    },
    {
      what: 'Terminated',
      dreamed: yes(p.terminated),
      real: yes(r.real.terminated),
      agrees: p.terminated === r.real.terminated,
    },
  ];
}

/** The try's answer as the dreamed-answer panel shows it (prompt, raw text and tries where the engine kept them). */
export function tryAnswer(r: TryStepResult): DreamAnswer {
  const p = r.prediction;
  return {
    ...(p.prompt ? { prompt: p.prompt } : {}),
    ...(p.raw !== undefined ? { raw: p.raw } : {}),
    ...(p.tries ? { tries: p.tries } : {}),
    usage: p.usage,
  };
}

/** The dream config of a try: the env's first preset with the Train page's experience-model settings. */
export function tryConfig(
  env: string,
  llm: string,
  params: Pick<TrainParams, 'k' | 'history' | 'reasoning' | 'seed'>,
): TrainConfig {
  return validateConfig({
    ...getPreset(presetsFor(env)[0]),
    mode: 'dream',
    llm,
    seed: params.seed,
    retrievalK: params.k,
    historyLength: params.history,
    reasoning: params.reasoning,
  } as unknown as Record<string, unknown>);
}

export class TryStep {
  env = $state(envIds()[0]);
  result = $state.raw<TryStepResult | null>(null);
  running = $state(false);
  error = $state<string | null>(null);
  /** The dreamed next state against the real one, word by word (null before a try). */
  readonly diff = $derived(this.result ? diffText(this.result.prediction.next.text, this.result.real.text) : null);
  private attempt = 0;

  /**
   * One step with the engine a run of this env dreams with (EngineSetup.dream: Setup's pick, else
   * the default; ε of the oracle and k/H/reasoning/answer budget from the Train form).
   */
  async run(session: TrainSession, engine: EngineSetup, params: TrainParams): Promise<void> {
    this.running = true;
    this.error = null;
    try {
      await engine.ready();
      const config = tryConfig(this.env, engine.dream(this.env, params.epsR, params.epsP).llm, params);
      const runtime = { ...engine.runtime(config.llm), ...engineRuntimeFromParams(params) };
      const result = await session.tryStep(config, runtime, this.attempt++);
      this.result = result;
      if (!result.prediction.cached && result.prediction.attempts > 0) {
        recordSpeed(config.llm, {
          secondsPerCall: result.ms / 1000,
          kind: 'latency',
          tokensPerTransition: result.tokens.prompt + result.tokens.completion,
          how: 'Try one step',
          at: Date.now(),
        });
      }
    } catch (error) {
      this.error = (error as Error).message;
    } finally {
      this.running = false;
    }
  }
}
