/**
 * The Train page's form (docs/architecture.md §9.1: the page renders, state lives here): the dream
 * engine Setup's rule gives the env, the engine list, what the settings will cost and reach, and
 * the changes that keep the rest of the form. One per mounted page, over the app's TrainSession.
 */
import { describeEstimate, estimateDreamCost } from '../../../core/train/estimate';
import { formatDuration } from '../../../core/train/progress';
import { experienceLabel } from '../../../core/llm/spec';
import { engineSetup } from '../setup/engine.svelte';
import { formEngine } from '../setup/engine';
import { learnedModels } from '../setup/learned-models.svelte';
import { estimateInputs, measuredSpeed } from '../setup/engine-speed';
import { dreamExpectation } from './shipped-dream-results';
import { dreamEngineOptions, type FieldContext, type ParamField } from './train-form';
import {
  configFromParams,
  engineAbilities,
  engineForEnv,
  llmSpec,
  presetsFor,
  tinyParams,
  withEngine,
  withMode,
  withPreset,
  type TrainParams,
} from './train-params';
import { useTrainSession, type TrainSession } from './train.svelte';

export class TrainForm {
  /** The app's session (context: a view is made while its page is set up). */
  readonly session: TrainSession = useTrainSession();
  readonly engine = engineSetup();
  /** The learned experience models of this env: the shipped one (when the build has it) and those trained here. */
  readonly learned = learnedModels();
  /** While a run trains its settings are locked: they fold away (one click shows them), so the live charts come up. */
  showLocked = $state(false);
  /** The past run picked to reopen ('' = none). */
  pastPick = $state('');

  get params(): TrainParams {
    return this.session.params;
  }

  // The engine Setup's rule gives this env (engine.ts dreamEngine: Setup's pick, else the shipped learned model,
  // else the oracle): the form's engine, offered in the list and named in the hint as Setup and Start here name it.
  readonly dream = $derived(this.engine.dream(this.params.env, this.params.epsR, this.params.epsP));
  readonly setupSpec = $derived(this.dream.source === 'chosen' && this.dream.kind !== 'oracle' ? this.dream.llm : '');
  /** A link's own ?llm= wins until Setup's engine for this env changes (TrainSession.followSetup). */
  readonly setupFollow = $derived(formEngine(this.dream));
  readonly engineOptions = $derived(
    dreamEngineOptions(this.setupSpec, this.learned.options(this.params.env), this.params.llm),
  );
  readonly abilities = $derived(engineAbilities(this.params.llm));
  readonly locked = $derived(this.session.active);
  readonly folded = $derived(this.locked && !this.showLocked);
  readonly dreaming = $derived(this.params.mode !== 'real');
  readonly fieldContext: FieldContext = $derived({ params: this.params, abilities: this.abilities });

  /** Where the run's experience comes from, in words (or why the engine spec does not parse). */
  readonly experience = $derived.by(() => {
    try {
      return experienceLabel({ mode: this.params.mode, llm: llmSpec(this.params) });
    } catch (error) {
      return (error as Error).message;
    }
  });

  /** What the shipped model's dream reached (docs/results), for the run on screen, else the form's. */
  readonly expectation = $derived.by(() => {
    const c = this.session.active && this.session.runConfig ? this.session.runConfig : null;
    const p = this.params;
    try {
      return c ? dreamExpectation(c.env, c.mode, c.llm) : dreamExpectation(p.env, p.mode, llmSpec(p));
    } catch {
      return null;
    }
  });

  /** Before a dream starts: what it will cost at the engine's measured speed (else its typical one). */
  readonly estimate = $derived.by(() => {
    if (this.params.mode === 'real') return null;
    try {
      const config = configFromParams(this.params);
      const inputs = estimateInputs(
        measuredSpeed(config.llm),
        config.llm.startsWith('openai:') ? config.llmConcurrency : 1,
      );
      return describeEstimate(estimateDreamCost(config, inputs), formatDuration);
    } catch {
      return null;
    }
  });

  /** The form's run config, or null while a setting is invalid. */
  readonly config = $derived.by(() => {
    try {
      return configFromParams(this.params);
    } catch {
      return null;
    }
  });
  /** The whole run's time from this machine's speed (a dream with the shipped model, whose work was measured). */
  readonly runExpected = $derived(this.session.clock.expectedSeconds(this.config));
  readonly runBefore = $derived(this.session.clock.beforeStart(this.config));

  /** Whether a field of the tables in train-form.ts is off for the form as it is. */
  isOff(field: ParamField): boolean {
    return field.off?.(this.fieldContext) ?? false;
  }

  /** The settings an env or preset change keeps. */
  private kept(): Partial<TrainParams> {
    const p = this.params;
    return {
      mode: p.mode,
      algo: p.algo,
      seed: p.seed,
      epsR: p.epsR,
      epsP: p.epsP,
      llm: p.llm,
      answerTokens: p.answerTokens,
      retries: p.retries,
    };
  }

  changeEnv(env: string): void {
    this.session.params = withPreset(presetsFor(env)[0], { ...this.kept(), llm: engineForEnv(this.params.llm, env) });
  }

  changePreset(preset: string): void {
    this.session.params = withPreset(preset, this.kept());
  }

  changeMode(mode: TrainParams['mode']): void {
    this.session.params = withMode(this.session.params, mode);
  }

  changeEngine(llm: string): void {
    this.session.params = withEngine(this.session.params, llm);
  }

  /** A language model gets its env's LLM demo preset (a few thousand dreamed transitions); the others a small batch. */
  tiny(): void {
    this.session.params = tinyParams(this.session.params);
  }

  /** Reopens the picked past run with its charts and settings. */
  openPastRun(): void {
    void this.session.openRun(this.pastPick);
    this.pastPick = '';
  }
}
