/**
 * The Inspect page's plain logic: URL query round trip, episode filters, and the dream-vs-real
 * word diff (changed words marked on each side, unchanged text untouched).
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FILTERS,
  diffText,
  episodePage,
  filterEpisodes,
  inspectQuery,
  parseInspectQuery,
  percent,
} from '../../../src/app/state/inspect/inspect-logic';
import type { EpisodeSummary } from '../../../src/app/storage/episode-store';

function episode(over: Partial<EpisodeSummary>): EpisodeSummary {
  return {
    runId: 'r',
    iteration: 1,
    index: 0,
    episodeId: '1/0/0',
    phase: 'dream',
    taskId: 't',
    instruction: 'buy',
    origin: 'generated',
    success: false,
    return: 0,
    length: 3,
    refusedSteps: 0,
    dreamInvalidSteps: 0,
    ...over,
  };
}

describe('inspect query', () => {
  it('round-trips run, episode and step, and ignores malformed parts', () => {
    const q = { run: 'webshop-easy-dream-grpo-s1-abc', episode: { iteration: 3, index: 5 }, step: 2 };
    expect(parseInspectQuery(inspectQuery(q))).toEqual(q);
    expect(inspectQuery(q)).toBe('run=webshop-easy-dream-grpo-s1-abc&episode=3-5&step=2');
    expect(parseInspectQuery('run=&episode=x-1&step=0')).toEqual({ run: null, episode: null, step: null });
    expect(inspectQuery({ run: 'a', episode: null, step: 4 })).toBe('run=a');
  });
});

describe('episode search and paging', () => {
  const many = Array.from({ length: 250 }, (_, i) =>
    episode({
      iteration: 1 + Math.floor(i / 8),
      index: i % 8,
      episodeId: `e${i}`,
      taskId: `webshop-lite-v0/${i}`,
      instruction: i % 50 === 0 ? 'Buy a RED sofa under $300' : 'buy a blue lamp',
    }),
  );
  it('searches every word in the instruction, task id or episode id, in any case', () => {
    expect(filterEpisodes(many, { ...DEFAULT_FILTERS, text: 'red SOFA' })).toHaveLength(5);
    expect(filterEpisodes(many, { ...DEFAULT_FILTERS, text: '  ' })).toHaveLength(250);
    expect(filterEpisodes(many, { ...DEFAULT_FILTERS, text: 'webshop-lite-v0/249' }).map((e) => e.episodeId)).toEqual([
      'e249',
    ]);
    expect(filterEpisodes(many, { ...DEFAULT_FILTERS, text: 'red lamp' })).toHaveLength(0);
  });
  it('pages the filtered list, clamping the page to it', () => {
    const list = filterEpisodes(many, DEFAULT_FILTERS);
    expect(episodePage(list, 1)).toMatchObject({ page: 1, pages: 3, first: 1, last: 100, total: 250 });
    expect(episodePage(list, 3)).toMatchObject({ page: 3, first: 201, last: 250 });
    expect(episodePage(list, 3).items).toHaveLength(50);
    expect(episodePage(list, 9).page).toBe(3);
    expect(episodePage([], 2)).toMatchObject({ page: 1, pages: 1, first: 0, last: 0, total: 0, items: [] });
  });
});

describe('episode filters', () => {
  const list = [
    episode({ iteration: 1, index: 0, success: true }),
    episode({ iteration: 2, index: 1, success: false, dreamInvalidSteps: 1 }),
    episode({ iteration: 2, index: 0, success: false, phase: 'real', refusedSteps: 2 }),
    episode({ iteration: 3, index: 0, success: true, phase: 'real' }),
  ];
  const key = (es: EpisodeSummary[]) => es.map((e) => `${e.iteration}-${e.index}`);
  it('all: newest iteration first, then rollout order', () => {
    expect(key(filterEpisodes(list, DEFAULT_FILTERS))).toEqual(['3-0', '2-0', '2-1', '1-0']);
  });
  it('successes, failures, phase and invalid-only', () => {
    expect(key(filterEpisodes(list, { ...DEFAULT_FILTERS, outcome: 'success' }))).toEqual(['3-0', '1-0']);
    expect(key(filterEpisodes(list, { ...DEFAULT_FILTERS, outcome: 'failure' }))).toEqual(['2-0', '2-1']);
    expect(key(filterEpisodes(list, { ...DEFAULT_FILTERS, phase: 'dream' }))).toEqual(['2-1', '1-0']);
    expect(key(filterEpisodes(list, { ...DEFAULT_FILTERS, invalidOnly: true }))).toEqual(['2-0', '2-1']);
    expect(key(filterEpisodes(list, { outcome: 'failure', phase: 'real', invalidOnly: true }))).toEqual(['2-0']);
  });
});

describe('diffText', () => {
  it('marks only the changed words on each side', () => {
    const d = diffText('Results [SEP] red shoe [SEP] $12.00', 'Results [SEP] blue shoe [SEP] $12.00');
    expect(d.same).toBe(false);
    expect(d.granularity).toBe('word');
    expect(d.left.filter((s) => s.changed).map((s) => s.text)).toEqual(['red']);
    expect(d.right.filter((s) => s.changed).map((s) => s.text)).toEqual(['blue']);
    expect(d.left.map((s) => s.text).join('')).toBe('Results [SEP] red shoe [SEP] $12.00');
    expect(d.right.map((s) => s.text).join('')).toBe('Results [SEP] blue shoe [SEP] $12.00');
  });
  it('identical texts have no marks; additions are marked on one side only', () => {
    expect(diffText('a b', 'a b')).toMatchObject({ same: true, left: [{ text: 'a b', changed: false }] });
    const d = diffText('you see a mug', 'you see a mug and a plate');
    expect(d.left.every((s) => !s.changed)).toBe(true);
    expect(
      d.right
        .filter((s) => s.changed)
        .map((s) => s.text)
        .join(''),
    ).toBe(' and a plate');
  });
  it('falls back to lines, then the whole text, for very long texts', () => {
    const long = (w: string) => Array.from({ length: 1500 }, (_, i) => `${w}${i}`).join(' ');
    expect(diffText(long('a'), long('b')).granularity).toBe('line');
    const lines = (w: string) => Array.from({ length: 1500 }, (_, i) => `${w}${i}`).join('\n');
    expect(diffText(lines('a'), lines('b')).granularity).toBe('whole');
  });
  it('percent', () => {
    expect(percent(0.5)).toBe('50%');
    expect(percent(0.0004)).toBe('<0.1%');
    expect(percent(0.05)).toBe('5.0%');
    expect(percent(1)).toBe('100.0%');
  });
});
