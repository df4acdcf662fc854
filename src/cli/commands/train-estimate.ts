/**
 * `train --estimate`: the dream's cost at the engine's measured speed, from one step tried with the engine.
 */
import type { TrainConfig } from '../../core/train/config';
import { buildRunParts } from '../../core/train/run-parts';
import { describeEstimate, estimateDreamCost, type EngineSpeed } from '../../core/train/estimate';
import { formatDuration } from '../../core/train/progress';
import { tryOneStep } from '../../core/experience/try-step';
import { bufferFromTrajectories } from '../../core/experience/seed-buffer';
import { nodeEngineDeps } from '../../node/edge';
import { UsageError } from '../args';
import { printJsonLast, terminalSafe } from '../output';
import { offlineTrajectories } from '../experience-options';
import { trainCommand } from './train-options';

/**
 * `train --estimate`: one step tried with the engine (on a held-out task, as Setup's "Try one
 * step"), then the dream's cost at the measured speed; nothing is trained or written.
 */
export async function estimateOnly(config: TrainConfig, dataset: string | undefined, json: boolean): Promise<void> {
  if (config.mode === 'real')
    throw new UsageError('--estimate sizes a dream: use it with --mode dream or s2r.', trainCommand);
  const buffer =
    config.retrievalK > 0
      ? await bufferFromTrajectories(await offlineTrajectories(config.env, dataset, trainCommand))
      : undefined;
  const { experienceModel } = await buildRunParts(
    { ...config, mode: 'dream', llmPrior: false, curriculumVariations: 'procedural' },
    { ...nodeEngineDeps(), ...(buffer ? { buffer } : {}) },
  );
  const tried = await tryOneStep(experienceModel!, { envId: config.env, clock: () => performance.now() });
  experienceModel!.dispose?.();
  const p = tried.prediction;
  const measured = p.attempts > 0 && !p.cached;
  const chat = config.llm.startsWith('openai:');
  const speed: EngineSpeed | undefined = measured
    ? {
        secondsPerTransition: tried.ms / 1000,
        parallel: chat ? config.llmConcurrency : 1,
        measured: true,
        source: `measured: one step took ${Math.round(tried.ms)} ms${chat ? `; ${config.llmConcurrency} at once if the server batches them (llmConcurrency)` : ''}`,
      }
    : undefined;
  const tokens = tried.tokens.prompt + tried.tokens.completion;
  const estimate = estimateDreamCost(config, {
    ...(speed ? { speed } : {}),
    ...(measured && chat && tokens > 0 ? { tokensPerTransition: tokens } : {}),
  });
  const verdict = p.valid
    ? `predicted ${p.actionValid ? 'a valid' : 'an invalid'} action, reward ${p.reward}${p.terminated ? ', terminated' : ''}`
    : `unusable answer (${p.invalidReason ?? 'no reason'})`;
  process.stderr.write(
    `try one step (${terminalSafe(tried.label)}): '${terminalSafe(tried.action)}' on task '${terminalSafe(tried.task.instruction)}': ${terminalSafe(verdict)}; ` +
      `the real env: ${tried.real.valid ? 'valid' : 'invalid'}, reward ${tried.real.reward}; ${tried.tokens.prompt} prompt + ${tried.tokens.completion} answer tokens, ${Math.round(tried.ms)} ms.\n`,
  );
  const text = `${describeEstimate(estimate, formatDuration)} Every figure is an estimate.`;
  if (json)
    printJsonLast({
      estimate,
      try_step: { action: tried.action, valid: p.valid, ms: Math.round(tried.ms), tokens: tried.tokens },
    });
  else console.log(text);
}
