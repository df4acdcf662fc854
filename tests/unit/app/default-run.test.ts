import { describe, expect, it } from 'vitest';
import { getPreset, validateConfig } from '../../../src/core/train/config';
import { curriculumRun, inspectDefaultRun, newestRun } from '../../../src/app/state/shared/default-run';
import type { RunEntry } from '../../../src/app/storage/run-list';

const config = (over: Record<string, unknown>) =>
  validateConfig({ ...getPreset('webshop-easy'), iterations: 3, ...over } as unknown as Record<string, unknown>);
const entry = (runId: string, createdAt: number, over: Record<string, unknown> = {}): RunEntry => ({
  runId,
  query: '',
  createdAt,
  state: 'finished',
  iteration: 3,
  iterations: 3,
  config: config(over),
});

// The start-here page's group as the run list holds it: one createdAt, the real run listed first.
const startHere = (at: number): RunEntry[] => [
  entry(`start-real-${at}`, at, { mode: 'real' }),
  entry(`start-dream-${at}`, at, { mode: 'dream', curriculum: true }),
  entry(`start-s2r-${at}`, at, { mode: 's2r', curriculum: true }),
];

describe('the run a page opens when its URL names none', () => {
  it('newest first; a tie in createdAt keeps the list order', () => {
    const runs = [entry('b', 2), entry('c', 3), entry('a', 1)];
    expect(newestRun(runs)?.runId).toBe('c');
    expect(newestRun(startHere(5))?.runId).toBe('start-real-5');
    expect(newestRun(runs, (r) => r.runId === 'a')?.runId).toBe('a');
    expect(newestRun([])).toBeNull();
  });

  it('Inspect: after Start, the dream run, not the real one listed first', () => {
    expect(inspectDefaultRun(startHere(5), null)).toBe('start-dream-5');
    // A newer real run still loses to an older dream run: there are dreamed steps to set against the real env.
    expect(inspectDefaultRun([entry('real-new', 9), ...startHere(5)], null)).toBe('start-dream-5');
    // The newest dream run of several, s2r counting as one.
    const runs = [entry('real', 9), entry('s2r', 8, { mode: 's2r' }), entry('dream', 7, { mode: 'dream' })];
    expect(inspectDefaultRun(runs, null)).toBe('s2r');
  });

  it('Inspect: the run training now wins; with no dream run, the newest run; none, null', () => {
    expect(inspectDefaultRun(startHere(5), 'start-real-5')).toBe('start-real-5');
    expect(inspectDefaultRun([entry('old', 1), entry('new', 2)], null)).toBe('new');
    expect(inspectDefaultRun([], null)).toBeNull();
  });

  it('Curriculum: after Start, the newest run with a curriculum (the dream run)', () => {
    const none = { url: null, training: null, shown: null };
    expect(curriculumRun(startHere(5), none)).toBe('start-dream-5');
    expect(curriculumRun([entry('real-new', 9), ...startHere(5)], none)).toBe('start-dream-5');
    // A real run with the curriculum on has a task bank too.
    expect(curriculumRun([entry('real-curr', 9, { curriculum: true }), ...startHere(5)], none)).toBe('real-curr');
    // No run with a curriculum: the newest run (the page says it has none); no run at all: null.
    expect(curriculumRun([entry('a', 1), entry('b', 2)], none)).toBe('b');
    expect(curriculumRun([], none)).toBeNull();
  });

  it('Curriculum: the URL, then a training run with a curriculum, then the run on screen', () => {
    const runs = [entry('live', 9, { mode: 'dream', curriculum: true }), entry('real-live', 8), ...startHere(5)];
    expect(curriculumRun(runs, { url: 'start-s2r-5', training: 'live', shown: 'start-dream-5' })).toBe('start-s2r-5');
    expect(curriculumRun(runs, { url: null, training: 'live', shown: 'start-dream-5' })).toBe('live');
    // A training run without a curriculum does not take the page over from the run on screen.
    expect(curriculumRun(runs, { url: null, training: 'real-live', shown: 'start-s2r-5' })).toBe('start-s2r-5');
    expect(curriculumRun(runs, { url: null, training: 'real-live', shown: null })).toBe('live');
    // Unknown ids (a deleted run) do not count.
    expect(curriculumRun(runs, { url: 'gone', training: 'gone-too', shown: 'gone-as-well' })).toBe('live');
    // Nothing with a curriculum: the run training now before the newest.
    const plain = [entry('new', 9), entry('real-live', 1)];
    expect(curriculumRun(plain, { url: null, training: 'real-live', shown: null })).toBe('real-live');
  });
});
