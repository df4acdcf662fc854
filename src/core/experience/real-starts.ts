/**
 * Dreams that start from real states (MBPO, DreamerV3): a dream episode may begin at a recorded
 * step of a real episode, with the real prefix as its history, and run a short horizon from there.
 * The model then imagines only a few steps away from states the data shows, where it errs least,
 * and the agent meets states of every depth, not only the first ones.
 *
 * The pool holds the real episodes a run may start from: the replay buffer's real episodes of the
 * env, or an imported domain's training episodes (run-parts.ts builds it). A start replaces the
 * task it was drawn for with the recorded episode's own task, since the recorded history belongs
 * to that task. `RealStartsModel` carries the pool on the experience model, so whatever trains in
 * the dream (the loop, a domain's trainer) finds it there.
 */
import type { Rng } from '../rng';
import type { Step, Task } from '../types';
import type { ExperienceModel, RealStart, RealStartSource } from './types';
import { WrappedExperienceModel } from './wrapped-model';

/** A real episode as a start pool keeps it: its task and its recorded steps, oldest first. */
export interface RealStartEpisode {
  task: Task;
  steps: readonly Pick<Step, 'observation' | 'admissible' | 'action' | 'reward' | 'valid'>[];
}

export class RealStartPool implements RealStartSource {
  private readonly episodes: RealStartEpisode[];

  /** Keeps the episodes with at least one state to act in (a state whose admissible list is not empty). */
  constructor(episodes: readonly RealStartEpisode[]) {
    this.episodes = episodes.filter((e) => startableSteps(e).length > 0);
  }

  get size(): number {
    return this.episodes.length;
  }

  /** A recorded episode, then one of its states, each uniformly: short and long episodes weigh alike. */
  pick(rng: Rng): RealStart {
    if (this.episodes.length === 0) throw new RangeError('RealStartPool.pick: no real episode to start from');
    const episode = rng.int(0, this.episodes.length - 1);
    const recorded = this.episodes[episode];
    const fromStep = rng.pick(startableSteps(recorded));
    const history: Step[] = recorded.steps.slice(0, fromStep).map((s) => ({
      observation: s.observation,
      admissible: s.admissible.slice(),
      action: s.action,
      reward: s.reward,
      terminated: false,
      truncated: false,
      valid: s.valid,
    }));
    const state = recorded.steps[fromStep];
    return {
      task: recorded.task,
      history,
      state: { text: state.observation, admissible: state.admissible.slice() },
      fromStep,
      episode,
    };
  }
}

/** The step indices an episode can start from: those with something to do. */
function startableSteps(episode: RealStartEpisode): number[] {
  const out: number[] = [];
  for (let i = 0; i < episode.steps.length; i++) if (episode.steps[i].admissible.length > 0) out.push(i);
  return out;
}

/** An experience model that carries a pool of real starts; everything else is the inner model's. */
export class RealStartsModel extends WrappedExperienceModel {
  constructor(
    inner: ExperienceModel,
    private readonly pool: RealStartPool,
  ) {
    super(inner);
  }

  override get realStarts(): RealStartPool {
    return this.pool;
  }
}
