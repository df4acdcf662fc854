/**
 * Imports that list no admissible actions (ETO; AgentGym outside ALFWorld): `domain import` gives
 * every step candidates inferred from the training data (candidates.ts), and the episodes' ends
 * keep what the format recorded (a truncated episode's last step is marked so; an AgentGym
 * episode ends in success only when the user says so).
 */
import { describe, expect, it } from 'vitest';
import { readTrajectories, writeTrajectories } from '../../../src/core/data/formats';
import { candidateIndex, inferCandidates, INFERRED_CANDIDATES } from '../../../src/core/domain/candidates';
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
