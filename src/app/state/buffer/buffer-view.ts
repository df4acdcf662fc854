/**
 * The Buffer page's numbers in words (plain logic, unit-tested in Node): every count with the
 * reader's thousands separator (toLocaleString, as the rest of the app writes counts), the table
 * of transitions by environment and source, and the lines that sum up an import or a search.
 */
import type { ImportResult } from '../../../core/buffer/buffer';
import { TRANSITION_SOURCES, type BufferStats, type TransitionSource } from '../../../core/buffer/types';

/** A count as the reader writes numbers: 11886 → '11,886' in English. */
export function count(n: number): string {
  return n.toLocaleString();
}

/** One row of the table: the environment, then each source's count ('0' for none). */
export interface SourceRow {
  env: string;
  counts: Record<TransitionSource, string>;
}

/** Transitions by environment (sorted by name) and source, every count formatted. */
export function sourceRows(byEnvAndSource: BufferStats['byEnvAndSource']): SourceRow[] {
  return Object.entries(byEnvAndSource)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([env, bySource]) => ({
      env,
      counts: Object.fromEntries(TRANSITION_SOURCES.map((s) => [s, count(bySource[s] ?? 0)])) as SourceRow['counts'],
    }));
}

/** What one import wrote: 'household-v0: 240 episodes added (1,234 transitions), 0 skipped'. */
export function importSummary(label: string, result: ImportResult): string {
  const renamed = result.renamed.length
    ? `; ${count(result.renamed.length)} had an id this buffer holds for a different episode and were stored ` +
      `under a new id (${result.renamed
        .slice(0, 3)
        .map((r) => `${r.id} → ${r.storedAs}`)
        .join(', ')}${result.renamed.length > 3 ? ', …' : ''})`
    : '';
  return (
    `${label}: ${count(result.episodes)} episodes added (${count(result.transitions)} transitions), ` +
    `${count(result.skipped)} skipped${renamed}`
  );
}

/** The line above the search results: how many came back (one per episode, so maybe fewer than k). */
export function resultsLine(found: number): string {
  return `${count(found)} most similar transition${found === 1 ? '' : 's'}, one per episode.`;
}
