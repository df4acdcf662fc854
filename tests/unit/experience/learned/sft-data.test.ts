import { beforeAll, describe, expect, it } from 'vitest';
import { makeBaselinePolicy, rolloutEpisode } from '../../../../src/core/data/rollout';
import { HELD_OUT_SEED_BASE } from '../../../../src/core/envs/env';
import { getEnvDefinition, makeEnv } from '../../../../src/core/envs/registry';
import { builtInDomainCard } from '../../../../src/core/experience/domain-card';
import { DEFAULT_FORMAT_OPTIONS, decodeAnswer } from '../../../../src/core/experience/learned/format';
import {
  answerOf,
  bufferRetriever,
  buildPairs,
  realEpisodes,
  splitByTask,
  trlMessagesJsonl,
} from '../../../../src/core/experience/learned/sft-data';
import { Tokenizer } from '../../../../src/core/experience/learned/tokenizer';
import { bufferFromTrajectories } from '../../../../src/core/experience/seed-buffer';
import type { ReplayBuffer } from '../../../../src/core/buffer/buffer';
import type { Trajectory } from '../../../../src/core/types';

const ENV = 'household-v0';
const card = builtInDomainCard(ENV)!;
let trajectories: Trajectory[];
let buffer: ReplayBuffer;

beforeAll(async () => {
  const definition = getEnvDefinition(ENV);
  const seeds = [10, 11, 12, 13, 14, 15, HELD_OUT_SEED_BASE + 3, HELD_OUT_SEED_BASE + 4];
  trajectories = [];
  for (const seed of seeds)
    trajectories.push(
      await rolloutEpisode(makeEnv(ENV), makeBaselinePolicy(seed % 2 ? 'random' : 'expert'), {
        seed,
        task: definition.generateTask(seed, 0),
      }),
    );
  // A dreamed episode in the buffer must never become training data.
  const dreamed = { ...trajectories[0], id: 'dreamed/0', source: 'dream' as const };
  buffer = await bufferFromTrajectories(trajectories);
  await buffer.importTrajectories([dreamed], { source: 'dream', createdAt: 0 });
});

describe('SFT data of the learned experience model', () => {
  it('learns from real episodes only, split by task, never from held-out evaluation seeds', async () => {
    const { episodes, tasks } = await realEpisodes(buffer, ENV);
    expect(episodes.some((e) => e.id === 'dreamed/0')).toBe(false);
    const split = splitByTask(episodes, tasks, 0.3, 0);
    expect(split.heldOutDropped).toBe(2);
    const seedOf = (taskId: string) => tasks.get(taskId)?.seed ?? 0;
    for (const e of [...split.train, ...split.validation]) expect(seedOf(e.taskId)).toBeLessThan(HELD_OUT_SEED_BASE);
    const trainTasks = new Set(split.train.map((e) => e.taskId));
    for (const e of split.validation) expect(trainTasks.has(e.taskId)).toBe(false);
    expect(split.train.length + split.validation.length).toBe(6);
  });

  it('pairs every usable step with its answer, plus one first state per task, retrieving outside the own episode', async () => {
    const { episodes } = await realEpisodes(buffer, ENV);
    const tokenizer = Tokenizer.learn(
      trajectories.flatMap((t) => [
        t.task.instruction,
        ...t.steps.flatMap((s) => [s.observation, s.action, ...s.admissible]),
      ]),
      { minCount: 1 },
    );
    const seen: string[] = [];
    const retrieve = bufferRetriever(buffer);
    const spy = async (t: Parameters<typeof retrieve>[0], k: number) => {
      const hits = await retrieve(t, k);
      for (const h of hits) {
        expect(h.episodeId).not.toBe(t.episodeId);
        expect(h.source).not.toBe('dream');
        seen.push(h.id);
      }
      return hits;
    };
    const pairs = await buildPairs(episodes.slice(0, 3), tokenizer, card, DEFAULT_FORMAT_OPTIONS, spy);
    expect(seen.length).toBeGreaterThan(0);
    const initial = pairs.filter((p) => p.kind === 'initial');
    expect(initial.length).toBe(3);
    const next = pairs.filter((p) => p.kind === 'next');
    const usable = episodes
      .slice(0, 3)
      .flatMap((e) => e.steps)
      .filter((t) => answerOf(card, t));
    expect(next.length).toBe(usable.length);
    // The answer says what the recorded step did.
    expect(decodeAnswer(tokenizer, next[0].answer)).toEqual(answerOf(card, usable[0]));
    // Contexts hold the instruction, never the task's spec.
    const text = tokenizer.decode(next[0].context);
    expect(text).toContain(episodes[0].instruction.slice(0, 20));
    expect(text).not.toContain('"goal"');
  });

  it("exports TRL messages JSONL with the reasoning model's prompt and the JSON answer", async () => {
    const { episodes } = await realEpisodes(buffer, ENV);
    const jsonl = await trlMessagesJsonl(episodes.slice(0, 2), card, bufferRetriever(buffer));
    const lines = jsonl
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) {
      expect(line.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant']);
      const answer = JSON.parse(line.messages[2].content);
      expect(Object.keys(answer).sort()).toEqual(['next_state', 'reward', 'terminated', 'valid']);
      expect(line.messages[0].content).toContain('You simulate the environment');
    }
  });
});

describe('unchanged steps in the SFT data', () => {
  it('marks a WebShop option click, which leaves the page as it was, and no step that changes it', async () => {
    const shop = 'webshop-lite-v0';
    const shopCard = builtInDomainCard(shop)!;
    const definition = getEnvDefinition(shop);
    const episodes: Trajectory[] = [];
    for (const seed of [20, 21, 22, 23])
      episodes.push(
        await rolloutEpisode(makeEnv(shop), makeBaselinePolicy('expert'), {
          seed,
          task: definition.generateTask(seed, 1),
        }),
      );
    const shopBuffer = await bufferFromTrajectories(episodes);
    const steps = (await realEpisodes(shopBuffer, shop)).episodes.flatMap((e) => e.steps);
    const answers = steps.map((t) => ({ t, a: answerOf(shopCard, t)! })).filter((x) => x.a);
    const unchanged = answers.filter((x) => x.a.unchanged);
    expect(unchanged.length).toBeGreaterThan(0);
    for (const { t, a } of unchanged) {
      expect(t.action).toMatch(/^click\[/);
      expect(a.observation).toBe(answers.find((x) => x.t === t)!.a.observation);
      expect(t.nextObservation).toBe(t.observation);
    }
    // Searches, product clicks and purchases change the page.
    for (const { t, a } of answers.filter((x) => /^search\[|^click\[b0|buy now/.test(x.t.action)))
      expect(a.unchanged, t.action).toBeUndefined();
    await shopBuffer.store.close();
  });
});
