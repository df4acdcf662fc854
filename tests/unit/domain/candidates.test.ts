/**
 * Imports that list no admissible actions (ETO; AgentGym outside ALFWorld): `domain import` gives
 * every step candidates inferred from the training data (candidates.ts), and the episodes' ends
 * keep what the format recorded (a truncated episode's last step is marked so; an AgentGym
 * episode ends in success only when the user says so).
 */
import { describe, expect, it } from 'vitest';
import { readTrajectories, writeTrajectories } from '../../../src/core/data/formats';
import {
  candidateIndex,
  inferCandidates,
  INFERRED_CANDIDATES,
  NEIGHBOURS,
  POSTINGS_PER_STATE,
  withInferredCandidates,
} from '../../../src/core/data/candidates';
import { Rng } from '../../../src/core/rng';
import { buildDomain } from '../../../src/core/domain/domain';
import type { Step, Trajectory } from '../../../src/core/types';
import { householdEpisodes } from './fixtures';

async function etoEpisodes(n: number): Promise<Trajectory[]> {
  return readTrajectories(writeTrajectories(await householdEpisodes(n), 'eto'), 'eto');
}

function episode(id: string, instruction: string, steps: [string, string][]): Trajectory {
  return {
    format: 'dreamgym-trajectory/1',
    id,
    env: 'app',
    seed: 0,
    source: 'imported',
    task: { id: `app/${id}`, env: 'app', instruction, difficulty: 0.5, origin: 'imported' },
    steps: steps.map(([observation, action]): Step => ({
      observation,
      admissible: [],
      action,
      reward: 0,
      terminated: false,
      truncated: false,
      valid: true,
    })),
    final_observation: 'done',
    result: { reward: 0, success: false, score: 0, steps: steps.length, terminate_reason: 'unfinished' },
  };
}

describe('inferred candidates', () => {
  const train = [
    episode('a', 'book a flight to paris', [
      ['home page, search box', 'search[paris]'],
      ['results: flight 1, flight 2', 'click[flight 1]'],
    ]),
    episode('b', 'book a flight to rome', [
      ['home page, search box', 'search[rome]'],
      ['results: flight 3, flight 4', 'click[flight 4]'],
    ]),
    episode('c', 'cancel my booking', [
      ['home page, search box', 'click[my bookings]'],
      ['bookings: booking 7', 'click[cancel booking 7]'],
    ]),
  ];

  it('holds the demonstrated action and those of similar states, sorted, never from the own episode', () => {
    const index = candidateIndex(train);
    const state = { instruction: 'book a flight to oslo', observation: 'home page, search box' };
    const list = inferCandidates(index, state, 'search[oslo]', -1);
    expect(list).toEqual([...list].sort());
    expect(list).toContain('search[oslo]');
    expect(list).toEqual(expect.arrayContaining(['search[paris]', 'search[rome]', 'click[my bookings]']));
    // The state of episode a, its own episode left out: its own action comes only as the demonstrated one.
    const own = inferCandidates(index, { ...state, instruction: train[0].task.instruction }, 'search[paris]', 0);
    expect(own).toContain('search[rome]');
    expect(inferCandidates(index, state, undefined, 0)).not.toContain('search[paris]');
  });

  it('fills up to two from the most frequent actions when nothing is similar', () => {
    const list = inferCandidates(
      candidateIndex(train),
      { instruction: 'zzz', observation: 'qqq', previousAction: 'www' },
      'x',
    );
    expect(list).toHaveLength(2);
    expect(list).toContain('x');
  });

  it('gives every step of an ETO import a list (the held-out ones from training actions only)', async () => {
    const episodes = await etoEpisodes(12);
    expect(episodes.every((t) => t.steps.every((s) => s.admissible.length === 0))).toBe(true);
    const domain = buildDomain('hh', episodes);
    const steps = [...domain.train, ...domain.heldOut].flatMap((t) => t.steps);
    expect(domain.stats.inferredAdmissibleSteps).toBe(steps.length);
    expect(domain.stats.stepsWithAdmissible).toBe(0);
    for (const s of steps) {
      expect(s.admissible).toContain(s.action);
      expect(s.admissible.length).toBeGreaterThanOrEqual(2);
      expect(s.admissible.length).toBeLessThanOrEqual(INFERRED_CANDIDATES);
    }
    const trained = new Set(domain.train.flatMap((t) => t.steps.map((s) => s.action)));
    for (const t of domain.heldOut) {
      for (const s of t.steps)
        expect(s.admissible.filter((a) => a !== s.action).every((a) => trained.has(a))).toBe(true);
    }
    expect(domain.warnings.join('\n')).toMatch(/got candidates inferred from the training data/);
    // Deterministic: the same import gives the same lists.
    expect(buildDomain('hh', episodes).heldOut).toEqual(domain.heldOut);
  });

  it('keeps recorded lists (AgentGym household) as they are', async () => {
    const episodes = readTrajectories(writeTrajectories(await householdEpisodes(12), 'agentgym'), 'agentgym');
    const domain = buildDomain('hh', episodes);
    expect(domain.stats.inferredAdmissibleSteps).toBe(0);
    expect(domain.train[0].steps[0].admissible).toEqual(
      episodes.find((t) => domain.train[0].id.endsWith(t.id))!.steps[0].admissible,
    );
  });
});

describe('recorded endings', () => {
  it('marks the last step of an episode that ran out of steps (ETO max_steps) as truncated', async () => {
    const domain = buildDomain('hh', await etoEpisodes(12));
    const all = [...domain.train, ...domain.heldOut];
    const truncated = all.filter((t) => t.result.terminate_reason === 'truncated');
    expect(truncated.length).toBeGreaterThan(0);
    for (const t of truncated)
      expect(t.steps[t.steps.length - 1]).toMatchObject({ truncated: true, terminated: false });
    for (const t of all) expect(t.steps.slice(0, -1).every((s) => !s.truncated)).toBe(true);
    // The writers keep the final observation, so the last transition has a next state.
    expect(all.every((t) => t.final_observation !== '')).toBe(true);
  });

  it('AgentGym episodes end in success only when the import is told so', async () => {
    const episodes = readTrajectories(writeTrajectories(await householdEpisodes(12), 'agentgym'), 'agentgym');
    const unknown = buildDomain('hh', episodes);
    expect([...unknown.train, ...unknown.heldOut].every((t) => t.result.terminate_reason === 'unfinished')).toBe(true);
    expect(unknown.warnings.join('\n')).toMatch(/12 episodes of 12 record no outcome.*--unrecorded-outcome success/s);
    const told = buildDomain('hh', episodes, { unrecordedOutcome: 'success' });
    expect(told.stats.assumedSuccesses).toBe(12);
    for (const t of [...told.train, ...told.heldOut]) {
      expect(t.result).toMatchObject({ success: true, terminate_reason: 'success' });
      expect(t.steps[t.steps.length - 1]).toMatchObject({ terminated: true, reward: 1 });
    }
    expect(told.warnings.join('\n')).not.toMatch(/record no outcome/);
  });
});

/**
 * Episodes of an application with a small vocabulary (as household's 356 words): every word is in
 * many states, so a search that reads every posting is quadratic. Made by code, seeded.
 */
function smallVocabularyEpisodes(count: number, steps = 10): Trajectory[] {
  const rng = Rng.fromSeed(44, 'candidates', String(count));
  const vocabulary = Array.from({ length: 60 }, (_, i) => `word${i}`);
  const actions = Array.from({ length: 40 }, (_, i) => `act[${i}]`);
  return Array.from({ length: count }, (_, e) =>
    episode(
      `e${e}`,
      `task ${e % 20} ${rng.pick(vocabulary)}`,
      Array.from({ length: steps }, (): [string, string] => [
        Array.from({ length: 12 }, () => rng.pick(vocabulary)).join(' '),
        rng.pick(actions),
      ]),
    ),
  );
}

/** The candidates of an all-pairs search: every training state scored, the old definition written plainly. */
function allPairsCandidates(train: Trajectory[], state: Trajectory['steps'][number], t: Trajectory, own: number) {
  const index = candidateIndex(train);
  const words = (text: string) => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const vector = (instruction: string, observation: string, previous: string | undefined) => {
    const v = new Map<string, number>();
    for (const w of words(observation)) v.set(w, 1);
    for (const w of words(previous ?? '<start>')) v.set(`a:${w}`, 1);
    for (const w of words(instruction)) v.set(`i:${w}`, 0.5);
    return v;
  };
  const idf = (w: string) => {
    const id = index.vocabulary.get(w);
    return id === undefined ? 0 : index.idf[id];
  };
  const cosine = (a: Map<string, number>, b: Map<string, number>) => {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (const [w, x] of a) {
      dot += x * idf(w) * (b.get(w) ?? 0) * idf(w);
      na += (x * idf(w)) ** 2;
    }
    for (const [w, x] of b) nb += (x * idf(w)) ** 2;
    return dot / Math.sqrt(na * nb);
  };
  const i = t.steps.indexOf(state);
  const query = vector(t.task.instruction, state.observation, t.steps[i - 1]?.action);
  const scored = train.flatMap((other, e) =>
    e === own
      ? []
      : other.steps.map((s, j) => ({
          action: s.action,
          score: cosine(query, vector(other.task.instruction, s.observation, other.steps[j - 1]?.action)),
        })),
  );
  return scored.filter((s) => s.score > 0);
}

describe('inferred candidates at scale (issue 44, repro 7)', () => {
  it('reads a bounded number of postings per state, however large the import', () => {
    const perState = [500, 2000].map((count) => {
      const episodes = smallVocabularyEpisodes(count);
      const cut = Math.floor(count * 0.8);
      const filled = withInferredCandidates(episodes.slice(0, cut), episodes.slice(cut));
      expect(filled.inferredSteps).toBe(count * 10);
      return filled.postingsRead / (count * 10);
    });
    // All pairs would read 8,400 postings per state at 500 episodes, and 33,600 at 2,000.
    for (const work of perState) expect(work).toBeLessThanOrEqual(POSTINGS_PER_STATE * 1.25);
    expect(perState[1]).toBeLessThan(perState[0] * 1.5);
  });

  it('is exact below the budget: the same neighbours as an all-pairs search', async () => {
    const train = readTrajectories(writeTrajectories(await householdEpisodes(12), 'eto'), 'eto');
    expect(candidateIndex(train).postingCap).toBe(Infinity);
    const t = train[3];
    const state = t.steps[2];
    const list = inferCandidates(
      candidateIndex(train),
      { instruction: t.task.instruction, observation: state.observation, previousAction: t.steps[1].action },
      state.action,
      3,
    );
    const votes = new Map<string, number>();
    const best = allPairsCandidates(train, state, t, 3)
      .sort((a, b) => b.score - a.score)
      .slice(0, NEIGHBOURS);
    for (const { action, score } of best)
      if (action !== state.action) votes.set(action, (votes.get(action) ?? 0) + score);
    const expected = [...votes.entries()].sort((a, b) => b[1] - a[1]).slice(0, INFERRED_CANDIDATES - 1);
    expect(list).toEqual([state.action, ...expected.map(([a]) => a)].sort());
  });
});

describe('inferred candidates of repeated states', () => {
  it('gives each step of a state repeated in many episodes the list of its own search', () => {
    // 40 episodes over 8 tasks, each task's episodes alike: most states recur in several episodes.
    const base = smallVocabularyEpisodes(8, 6);
    const episodes = Array.from({ length: 40 }, (_, e) => {
      const t = base[e % 8];
      const steps = t.steps.map((s, i) => (i === e % 6 ? { ...s, action: `act[${e}]` } : s));
      return { ...t, id: `r${e}`, steps };
    });
    const train = episodes.slice(0, 32);
    const heldOut = episodes.slice(32);
    const filled = withInferredCandidates(train, heldOut);
    const index = candidateIndex(train);
    const alone = (t: Trajectory, own: number) =>
      t.steps.map((s, i) =>
        inferCandidates(
          index,
          { instruction: t.task.instruction, observation: s.observation, previousAction: t.steps[i - 1]?.action },
          s.action,
          own,
        ),
      );
    expect(filled.train.map((t) => t.steps.map((s) => s.admissible))).toEqual(train.map((t, e) => alone(t, e)));
    expect(filled.heldOut.map((t) => t.steps.map((s) => s.admissible))).toEqual(heldOut.map((t) => alone(t, -1)));
    // Shared searches read fewer postings than one search a step.
    expect(filled.postingsRead).toBeLessThan(index.postingsRead);
  });
});
