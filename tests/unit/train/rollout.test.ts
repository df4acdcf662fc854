/**
 * The rollout phase (src/core/train/rollout.ts): every running episode of a step calls env.step
 * at once, so the experience model receives concurrent `next` calls; the results are applied in
 * episode order, so the order the calls complete in changes nothing.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getEnvDefinition } from '../../../src/core/envs/registry';
import { makeDreamEnv } from '../../../src/core/experience/dream-env';
import { NoisyOracleModel } from '../../../src/core/experience/noisy-oracle';
import type { DreamContext, ExperienceModel, Prediction } from '../../../src/core/experience/types';
import { initBackend } from '../../../src/core/tfjs/backend';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import { hashString, Rng } from '../../../src/core/rng';
import { RegisteredEnvSource } from '../../../src/core/train/task-source';
import { EnvPool, startEpisodes, stepEpisodes } from '../../../src/core/train/rollout';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import type { Task } from '../../../src/core/types';

beforeAll(async () => {
  await initBackend('wasm');
});

const ENV = 'webshop-lite-v0';

/** The oracle, recording how many `next` calls are in flight; with `shuffle`, each answer waits 0–7 ms (so calls complete out of order). */
class InFlightRecorder implements ExperienceModel {
  readonly label = 'oracle with an in-flight recorder (test double)';
  private readonly inner = new NoisyOracleModel(ENV, { epsilonReward: 0.2, epsilonTransition: 0.2, seed: 3 });
  inFlight = 0;
  maxInFlight = 0;
  readonly completed: string[] = [];
  constructor(private readonly shuffle: boolean) {}
  initial(task: Task): Promise<never> {
    return Promise.reject(new Error(`not asked: ${task.id} has a real start page`));
  }
  async next(ctx: DreamContext): Promise<Prediction> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const prediction = await this.inner.next(ctx);
    if (this.shuffle)
      await new Promise((resolve) => setTimeout(resolve, hashString(`${ctx.task.id} ${ctx.action}`) % 8));
    this.inFlight--;
    this.completed.push(`${ctx.task.id} ${ctx.action}`);
    return prediction;
  }
}

const policies: CandidatePolicy[] = [];
afterEach(() => {
  for (const p of policies.splice(0)) p.dispose();
});

/** One rollout step of 3 tasks × 2 episodes in DreamEnvs over `model` (step limit 1). */
async function oneStep(model: ExperienceModel) {
  const config = validateConfig({ ...getPreset('webshop-easy'), mode: 'dream' });
  const source = new RegisteredEnvSource(config, model);
  const tasks = [0, 1, 2].map((seed) => getEnvDefinition(ENV).generateTask(seed, 0));
  const envs = new EnvPool(() => makeDreamEnv(model, { envId: ENV, stepLimit: 1 }));
  const { episodes } = await startEpisodes(tasks, {
    iteration: 1,
    groupSize: 2,
    phase: 'dream',
    source,
    envs,
    rng: Rng.fromSeed(1, 'tasks'),
  });
  const policy = new CandidatePolicy({ seed: 1 });
  policies.push(policy);
  const tally = await stepEpisodes(episodes, {
    policy,
    rng: Rng.fromSeed(1, 'sample'),
    phase: 'dream',
    stepLimit: 1,
    stepBudget: Infinity,
  });
  return { episodes, tally };
}

describe('a rollout step', () => {
  it("steps all running episodes at once: the experience model's next calls overlap", async () => {
    const model = new InFlightRecorder(true);
    const { episodes, tally } = await oneStep(model);
    expect(episodes).toHaveLength(6);
    expect(tally).toMatchObject({ steps: 6, predictions: 6 });
    expect(model.maxInFlight).toBe(6);
    expect(model.inFlight).toBe(0);
  });

  it('applies the results in episode order, whatever order the calls complete in', async () => {
    const shuffled = new InFlightRecorder(true);
    const inOrder = new InFlightRecorder(false);
    const a = await oneStep(shuffled);
    const b = await oneStep(inOrder);
    const called = a.episodes.map((e) => `${e.task.id} ${e.actions[0]}`);
    expect(shuffled.completed).not.toEqual(called); // the delays reordered the completions…
    expect(inOrder.completed).toEqual(called);
    const view = (r: typeof a) =>
      r.episodes.map((e) => ({
        id: e.episodeId,
        record: e.record.map(({ next, ...step }) => ({ ...step, next: next.text })),
        return: e.return,
      }));
    expect(view(a)).toEqual(view(b)); // …and nothing else
    expect(a.tally).toEqual(b.tally);
  });
});
