import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  dreamExpectation,
  SHIPPED_DREAM_RESULTS,
  SHIPPED_DREAM_SOURCE,
} from '../../../src/app/state/train/shipped-dream-results';

describe('what the shipped model dream reaches', () => {
  it('says the household figures, as a caution, for the shipped household model', () => {
    const e = dreamExpectation('household-v0', 'dream', 'learned:models/household-v0');
    expect(e?.weak).toBe(true);
    expect(e?.sentence).toContain('19.5 ± 9.3 % held-out real success');
    expect(e?.sentence).toContain('against 86.3 %');
    expect(e?.sentence).toContain('5 seeds');
    expect(e?.sentence).toContain(SHIPPED_DREAM_SOURCE);
    expect(dreamExpectation('household-v0', 's2r', 'learned:models/household-v0')?.weak).toBe(true);
  });

  it('says webshop figures without a caution', () => {
    const e = dreamExpectation('webshop-lite-v0', 'dream', 'learned:models/webshop-lite-v0');
    expect(e?.weak).toBe(false);
    expect(e?.sentence).toContain('89.0 ± 1.7 %');
    expect(e?.sentence).toContain('92.6 %');
  });

  it('says nothing for real RL, the oracle, a model trained here or another env', () => {
    expect(dreamExpectation('household-v0', 'real', 'learned:models/household-v0')).toBeNull();
    expect(dreamExpectation('household-v0', 'dream', 'oracle:0.1,0.1')).toBeNull();
    expect(dreamExpectation('household-v0', 'dream', 'learned:local/mine')).toBeNull();
    expect(dreamExpectation('household-v0', 'dream', 'learned:models/webshop-lite-v0')).toBeNull();
  });

  it('quotes figures that the named results file holds', () => {
    const table = readFileSync(SHIPPED_DREAM_SOURCE, 'utf8');
    for (const [env, r] of Object.entries(SHIPPED_DREAM_RESULTS)) {
      const section = table.slice(table.indexOf(`### ${env}`));
      expect(section).toContain(`preset ${r.preset}`);
      expect(section).toContain(`${r.iterations} iterations`);
      const row = (name: string) => section.split('\n').find((l) => l.startsWith(`| ${name}`)) ?? '';
      expect(row('GRPO — DreamGym (dream only)')).toContain(`| ${r.dreamMean.toFixed(1)} ± ${r.dreamStd.toFixed(1)} |`);
      expect(row('GRPO — Traditional (real env)')).toContain(`| ${r.realMean.toFixed(1)} ± `);
    }
  });
});
