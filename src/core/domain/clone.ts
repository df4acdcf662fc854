/**
 * Behaviour cloning on an imported domain's demonstrations: the agent's start before the dream
 * (the paper's agents start from an instruct model; ours from the demonstrations). It is the
 * project's SFT of the policy (train/sft.ts): maximum likelihood of the demonstrated action among
 * the step's candidates, over the TRAINING episodes only (the held-out ones measure agreement).
 *
 * Which episodes are demonstrations: those that reached their goal (recorded success), so a
 * random episode's wandering is not cloned; where none records a success (an export without
 * rewards imported with outcome 'unknown'), every training episode, and the result says so.
 *
 * Candidates: every step of a domain lists some. Recorded lists are kept; a step that listed none
 * got inferred candidates at import (candidates.ts: the demonstrated action and the actions taken
 * in the most similar training states), so BC learns to choose among the same kind of list the
 * dream writes (the learned model was trained on those lists) and `dreamgym act` infers at deployment.
 */
import type { CandidatePolicy, PolicyWeights } from '../policy/policy';
import { behaviourCloning, sftAccuracy, sftExamples, type SftEpoch } from '../train/sft';
import type { Trajectory, TrajectorySource } from '../types';
import type { Domain } from './domain';

/** The demonstrations BC learns from: the successful training episodes, or all where none records a success. */
export function demonstrations(domain: Pick<Domain, 'train'>): { episodes: Trajectory[]; which: 'successes' | 'all' } {
  const successes = domain.train.filter((t) => t.result.success);
  return successes.length > 0
    ? { episodes: successes, which: 'successes' }
    : { episodes: domain.train.slice(), which: 'all' };
}

export interface BcConfig {
  epochs: number;
  learningRate: number;
  batchSize: number;
  maxGradNorm: number;
  seed: number;
  /** The policy's step limit (the dream's), as the policy sees it at every step. */
  stepLimit: number;
}

export interface BcResult {
  /** Which episodes were cloned: those with a recorded success, or all (none records one). */
  demonstrations: 'successes' | 'all';
  episodes: number;
  /** Demonstrated steps with at least two candidates, the demonstrated action among them. */
  examples: number;
  epochs: SftEpoch[];
  /** Share of the demonstrated steps whose action the policy ranks first, before and after cloning. */
  accuracyBefore: number;
  accuracy: number;
  /** The cloned policy's weights: what `domain train` returns when the dream is not to be trusted. */
  weights: PolicyWeights;
}

/** Clones the domain's demonstrations into `policy` (in place); the same inputs give the same weights. */
export async function cloneDemonstrations(
  policy: CandidatePolicy,
  domain: Pick<Domain, 'train' | 'name'>,
  config: BcConfig,
  onEpoch?: (record: SftEpoch) => void,
): Promise<BcResult> {
  const chosen = demonstrations(domain);
  const sources = [...new Set(chosen.episodes.map((t) => t.source))] as TrajectorySource[];
  const examples = sftExamples(chosen.episodes, sources, config.stepLimit);
  if (examples.length === 0) {
    throw new Error(
      `The domain '${domain.name}' has no demonstrated step to clone: every step lists fewer than two candidates ` +
        'or its action is not among them. Import it again with dreamgym domain import (it infers candidates), ' +
        'or train with --agent dream.',
    );
  }
  const accuracyBefore = sftAccuracy(policy, examples);
  const epochs = await behaviourCloning(policy, examples, { ...config, sources }, onEpoch);
  return {
    demonstrations: chosen.which,
    episodes: chosen.episodes.length,
    examples: examples.length,
    epochs,
    accuracyBefore,
    accuracy: epochs[epochs.length - 1]?.accuracy ?? accuracyBefore,
    weights: await policy.getWeights(),
  };
}
