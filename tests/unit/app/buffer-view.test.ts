import { describe, expect, it } from 'vitest';
import { count, importSummary, resultsLine, sourceRows } from '../../../src/app/state/buffer/buffer-view';

// The reader's own separator (',' in English, '.' or a space elsewhere), never none.
const grouped = (text: string, high: string, low: string) => expect(text).toMatch(new RegExp(`^${high}\\D${low}$`));

describe("the Buffer page's counts", () => {
  it('formats every count with a thousands separator, as toLocaleString does', () => {
    grouped(count(11886), '11', '886');
    expect(count(11886)).toBe((11886).toLocaleString());
    expect(count(999)).toBe('999');
    expect(count(0)).toBe('0');
    expect(count(1234567)).toMatch(/^1\D234\D567$/);
  });

  it('lists transitions by environment (sorted) and source, 0 for a source with none', () => {
    const rows = sourceRows({ 'webshop-lite-v0': { offline: 11886, dream: 40 }, 'household-v0': { real: 2500 } });
    expect(rows.map((r) => r.env)).toEqual(['household-v0', 'webshop-lite-v0']);
    expect(rows[0].counts.offline).toBe('0');
    grouped(rows[0].counts.real, '2', '500');
    expect(rows[0].counts.dream).toBe('0');
    grouped(rows[1].counts.offline, '11', '886');
    expect(rows[1].counts.dream).toBe('40');
    expect(sourceRows({})).toEqual([]);
  });

  it('sums up an import and a search with formatted counts', () => {
    const line = importSummary('household-v0', {
      episodes: 1240,
      transitions: 11886,
      skipped: 0,
      repaired: 0,
      renamed: [],
    });
    expect(line).toBe(`household-v0: ${count(1240)} episodes added (${count(11886)} transitions), 0 skipped`);
    expect(line).toMatch(/^household-v0: 1\D240 episodes added \(11\D886 transitions\), 0 skipped$/);
    // The shape the Buffer e2e test reads.
    expect(
      importSummary('webshop-lite-v0', { episodes: 0, transitions: 0, skipped: 240, repaired: 0, renamed: [] }),
    ).toBe('webshop-lite-v0: 0 episodes added (0 transitions), 240 skipped');
    const renamed = [1, 2, 3, 4].map((i) => ({ id: `webshop_${i}`, storedAs: `webshop_${i}~ab${i}` }));
    expect(importSummary('mine', { episodes: 4, transitions: 20, skipped: 0, repaired: 0, renamed })).toBe(
      'mine: 4 episodes added (20 transitions), 0 skipped; 4 had an id this buffer holds for a different episode ' +
        'and were stored under a new id (webshop_1 → webshop_1~ab1, webshop_2 → webshop_2~ab2, ' +
        'webshop_3 → webshop_3~ab3, …)',
    );
    expect(resultsLine(4)).toBe('4 most similar transitions, one per episode.');
    expect(resultsLine(1)).toBe('1 most similar transition, one per episode.');
  });
});
