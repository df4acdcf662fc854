/**
 * A learned model corrected by real replays of its dream's claimed successes (correct(),
 * train/dream-correction.ts): a miss is a negative of the refitted verdict, so the step it
 * replayed scores lower; the refit is the same however the replays arrive; the halt wrapped
 * around it forwards the correction and indexes the replays as real data.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../../src/core/tfjs/backend';
import { ReplayBuffer } from '../../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../../src/core/buffer/stores/memory';
import { LearnedExperienceModel } from '../../../../src/core/experience/learned/learned-model';
import type { RecordedEpisode } from '../../../../src/core/experience/learned/sft-data';
import { fitHeadFor, judgeStep, type VerdictInput } from '../../../../src/core/experience/learned/verdict';
import { HaltingExperienceModel } from '../../../../src/core/experience/halting-model';
import { NoveltyIndex, recordedNoveltySteps } from '../../../../src/core/experience/novelty';
import type { Transition } from '../../../../src/core/types';
import { TOY_CARD, TOY_FORMAT, tinyNetwork, toyTokenizer } from './fixtures';
import { emptyTrainingRecord } from './tiny-model-files';

beforeAll(async () => {
  await initBackend('wasm');
});

const INSTRUCTION = 'open the red box';
const STATE = 'You see a red box 1 and a blue box 2.';
const ADMISSIBLE = ['open red box 1', 'open blue box 2'];

/** A one-step episode of the toy domain: the action ends it, with `reward`. */
function episode(id: string, action: string, reward: number, source: Transition['source']): RecordedEpisode {
  const step: Transition = {
    id: `${id}#0`,
    env: TOY_CARD.env,
    taskId: `task-${id}`,
    instruction: INSTRUCTION,
    episodeId: id,
    stepIndex: 0,
    observation: STATE,
    admissible: ADMISSIBLE.slice(),
    action,
    nextObservation: reward ? 'The red box opens.' : 'The blue box opens.',
    nextAdmissible: [],
    reward,
    terminated: true,
    truncated: false,
    source,
    valid: true,
    createdAt: 0,
  };
  return { id, taskId: step.taskId, instruction: INSTRUCTION, steps: [step] };
}

/** Real data: opening the asked box succeeds, the other fails (12 of each). */
function realData(): RecordedEpisode[] {
  return Array.from({ length: 24 }, (_, i) =>
    episode(
      `offline/${String(i).padStart(2, '0')}`,
      i % 2 ? 'open blue box 2' : 'open red box 1',
      i % 2 ? 0 : 1,
      'offline',
    ),
  );
}

async function toyModel(): Promise<{ model: LearnedExperienceModel; buffer: ReplayBuffer }> {
  const buffer = new ReplayBuffer(new MemoryBufferStore());
  await buffer.add(realData().flatMap((e) => e.steps.map((t) => ({ ...t, runId: 'offline' }))));
  const head = fitHeadFor(TOY_CARD, realData(), TOY_FORMAT.historyLength, { size: 3, seed: 0 })!;
  const tokenizer = toyTokenizer();
  const manifest = { name: 'toy', env: TOY_CARD.env, formatOptions: TOY_FORMAT, verdict: head };
  const model = new LearnedExperienceModel(tinyNetwork(tokenizer), tokenizer, TOY_CARD, {
    ...manifest,
    training: emptyTrainingRecord(),
  });
  return { model, buffer };
}

/** The step a dream called a success and the real env did not: opening the asked box. */
const CLAIMED: VerdictInput = {
  instruction: INSTRUCTION,
  history: [],
  state: { text: STATE, admissible: ADMISSIBLE },
  action: 'open red box 1',
};

function misses(from: number, count: number): RecordedEpisode[] {
  return Array.from({ length: count }, (_, i) => episode(`replay/${from + i}`, 'open red box 1', 0, 'real'));
}

describe('a learned model corrected by real replays', () => {
  it('adds a miss as a negative: the refitted head scores the replayed step lower', async () => {
    const { model, buffer } = await toyModel();
    const before = judgeStep(TOY_CARD, model.verdictInUse!, CLAIMED).p;
    expect(before).toBeGreaterThan(0.9);
    await model.correct({ episodes: misses(0, 12), buffer });
    const after = model.verdictInUse!;
    expect(after.members).toHaveLength(3);
    expect(after.fittedOn.failures).toBeGreaterThan(12);
    expect(judgeStep(TOY_CARD, after, CLAIMED).p).toBeLessThan(before - 0.2);
    model.dispose();
  });

  it('refits the same from the same replays, in one call or several', async () => {
    const one = await toyModel();
    const two = await toyModel();
    await one.model.correct({ episodes: misses(0, 6), buffer: one.buffer });
    await one.model.correct({ episodes: misses(6, 6), buffer: one.buffer });
    await two.model.correct({ episodes: misses(0, 12), buffer: two.buffer });
    expect(JSON.stringify(one.model.verdictInUse)).toBe(JSON.stringify(two.model.verdictInUse));
    await expect(one.model.correct({ episodes: [] })).resolves.toBeUndefined(); // its data is read once
    const bare = await toyModel();
    await expect(bare.model.correct({ episodes: misses(0, 1) })).rejects.toThrow(/no replay buffer was given/);
    for (const m of [one, two, bare]) m.model.dispose();
  });

  it('the halt forwards the correction and indexes the replays as real data', async () => {
    const { model, buffer } = await toyModel();
    const index = NoveltyIndex.fromEpisodes(realData().map(recordedNoveltySteps));
    const halting = new HaltingExperienceModel(model, index);
    // A verb no real step shows: novel until the replay is real data.
    const replay = episode('replay/novel', 'shake red box 1', 0, 'real');
    const [step] = recordedNoveltySteps(replay);
    expect(index.distance(step)).toBeGreaterThan(0);
    await halting.correct!({ episodes: [replay, ...misses(0, 12)], buffer });
    expect(index.distance(step)).toBe(0);
    expect(judgeStep(TOY_CARD, model.verdictInUse!, CLAIMED).p).toBeLessThan(0.9);
    halting.dispose();
  });
});
