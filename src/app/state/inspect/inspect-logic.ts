/**
 * Plain logic of the Inspect page (no Svelte, unit-tested in Node): the URL query, the episode
 * filters, and a word-level text diff between a dreamed and a real observation.
 */
import type { EpisodeSummary } from '../../storage/episode-store';

// ---- URL: #/inspect?run=ID&episode=ITERATION-INDEX&step=N (step is 1-based) ----------------------

export interface InspectQuery {
  run: string | null;
  episode: { iteration: number; index: number } | null;
  step: number | null;
}

export function parseInspectQuery(query: string): InspectQuery {
  const params = new URLSearchParams(query);
  const run = params.get('run')?.trim() || null;
  const m = /^(\d+)-(\d+)$/.exec(params.get('episode') ?? '');
  const episode = m ? { iteration: Number(m[1]), index: Number(m[2]) } : null;
  const stepText = params.get('step');
  const step = stepText && /^\d+$/.test(stepText) && Number(stepText) >= 1 ? Number(stepText) : null;
  return { run, episode, step };
}

export function inspectQuery(q: InspectQuery): string {
  const params = new URLSearchParams();
  if (q.run) params.set('run', q.run);
  if (q.episode) params.set('episode', `${q.episode.iteration}-${q.episode.index}`);
  if (q.episode && q.step) params.set('step', String(q.step));
  return params.toString();
}

// ---- Filters -------------------------------------------------------------------------------------

export type OutcomeFilter = 'all' | 'success' | 'failure';
export type PhaseFilter = 'all' | 'dream' | 'real';

export interface EpisodeFilters {
  outcome: OutcomeFilter;
  phase: PhaseFilter;
  /** Only episodes with an invalid step (a refused action or an unusable dream answer). */
  invalidOnly: boolean;
  /** Search: words that must all appear in the instruction, task id or episode id (any case). */
  text?: string;
}

export const DEFAULT_FILTERS: EpisodeFilters = { outcome: 'all', phase: 'all', invalidOnly: false, text: '' };

/** Episodes per page of the Inspect list (a run's last 20 iterations can hold thousands). */
export const EPISODES_PER_PAGE = 100;

function matchesText(e: EpisodeSummary, text: string | undefined): boolean {
  const words = (text ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = `${e.instruction}\n${e.taskId}\n${e.episodeId}`.toLowerCase();
  return words.every((w) => haystack.includes(w));
}

export interface EpisodePage {
  items: EpisodeSummary[];
  page: number;
  pages: number;
  first: number;
  last: number;
  total: number;
}

/** One page of a filtered list (the page is clamped to the list: a narrower filter never leaves an empty page). */
export function episodePage(list: readonly EpisodeSummary[], page: number, size = EPISODES_PER_PAGE): EpisodePage {
  const pages = Math.max(1, Math.ceil(list.length / size));
  const current = Math.min(Math.max(1, Math.floor(page) || 1), pages);
  const start = (current - 1) * size;
  const items = list.slice(start, start + size);
  return {
    items,
    page: current,
    pages,
    first: items.length ? start + 1 : 0,
    last: start + items.length,
    total: list.length,
  };
}

export function invalidSteps(e: EpisodeSummary): number {
  return e.refusedSteps + e.dreamInvalidSteps;
}

/** The episodes that pass the filters, newest iteration first (then in rollout order). */
export function filterEpisodes(episodes: readonly EpisodeSummary[], f: EpisodeFilters): EpisodeSummary[] {
  return episodes
    .filter(
      (e) =>
        (f.outcome === 'all' || (f.outcome === 'success') === e.success) &&
        (f.phase === 'all' || e.phase === f.phase) &&
        (!f.invalidOnly || invalidSteps(e) > 0) &&
        matchesText(e, f.text),
    )
    .sort((a, b) => b.iteration - a.iteration || a.index - b.index);
}

// ---- Text diff -----------------------------------------------------------------------------------

export interface DiffSegment {
  text: string;
  changed: boolean;
}
export interface TextDiff {
  left: DiffSegment[];
  right: DiffSegment[];
  same: boolean;
  granularity: 'word' | 'line' | 'whole';
}

/** Above this many LCS cells a word diff falls back to lines, then to the whole text. */
const MAX_CELLS = 1_500_000;

function wordTokens(text: string): string[] {
  return text.match(/\s+|[^\s]+/g) ?? [];
}
function lineTokens(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * What changed between `left` (the dream) and `right` (the real env): each side as segments,
 * the tokens not in their longest common subsequence marked `changed`.
 */
export function diffText(left: string, right: string): TextDiff {
  if (left === right)
    return { left: seg([[left, false]]), right: seg([[right, false]]), same: true, granularity: 'word' };
  for (const [granularity, tokenize] of [
    ['word', wordTokens],
    ['line', lineTokens],
  ] as const) {
    const a = tokenize(left),
      b = tokenize(right);
    if ((a.length + 1) * (b.length + 1) > MAX_CELLS) continue;
    const [inA, inB] = lcsMarks(a, b);
    return {
      left: seg(a.map((t, i) => [t, !inA[i]])),
      right: seg(b.map((t, i) => [t, !inB[i]])),
      same: false,
      granularity,
    };
  }
  return { left: seg([[left, true]]), right: seg([[right, true]]), same: false, granularity: 'whole' };
}

/** Which tokens of a and b belong to one longest common subsequence. */
function lcsMarks(a: readonly string[], b: readonly string[]): [boolean[], boolean[]] {
  const n = a.length,
    m = b.length,
    w = m + 1;
  const table = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * w + j] =
        a[i] === b[j] ? table[(i + 1) * w + j + 1] + 1 : Math.max(table[(i + 1) * w + j], table[i * w + j + 1]);
    }
  }
  const inA = new Array<boolean>(n).fill(false),
    inB = new Array<boolean>(m).fill(false);
  let i = 0,
    j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      inA[i] = true;
      inB[j] = true;
      i++;
      j++;
    } else if (table[(i + 1) * w + j] >= table[i * w + j + 1]) i++;
    else j++;
  }
  return [inA, inB];
}

/** Merges neighbouring tokens with the same mark; whitespace between two changes stays changed. */
function seg(tokens: [string, boolean][]): DiffSegment[] {
  const out: DiffSegment[] = [];
  for (const [text, changed] of tokens) {
    if (text === '') continue;
    const last = out[out.length - 1];
    if (last && last.changed === changed) last.text += text;
    else out.push({ text, changed });
  }
  return out;
}

/** A probability as a short percentage ('<0.1%' for tiny ones). */
export function percent(p: number): string {
  if (p > 0 && p < 0.001) return '<0.1%';
  return `${(p * 100).toFixed(p >= 0.995 || p < 0.1 ? 1 : 0)}%`;
}
