/** The start-here verdict sentence from the measured numbers (src/app/state/start/start-here-verdict.ts). */
import { describe, expect, it } from 'vitest';
import { startHereVerdict } from '../../../src/app/state/start/start-here-verdict';

const run = (heldOut: number | null, realSteps: number) => ({ heldOut, realSteps });

describe('startHereVerdict', () => {
  it('says what one seed can show: the 95 % interval at the held-out tasks, and the other seeds', () => {
    const v = { real: run(0.9, 4000), dream: run(0.5, 0), s2r: run(0.92, 600), untrained: 0.1 };
    expect(startHereVerdict(v)).not.toMatch(/One seed/);
    // p = 0.5 is the noisiest: 1.96 * sqrt(0.25 / 100) = 9.8 points.
    const text = startHereVerdict({ ...v, episodes: 100, seed: 2 })!;
    expect(text).toContain(' One seed on 100 held-out tasks: each rate is within about ±10 points (95 %), ');
    expect(text).toMatch(
      /so a smaller gap is not shown by this run; run seeds 1 and 3 \(#\/start\?seed=S\) to see the spread\.$/,
    );
    // All near 0.9: 1.96 * sqrt(0.09 / 400) = 2.9 points.
    const high = { real: run(0.9, 4000), dream: run(0.9, 0), s2r: run(0.9, 600), untrained: 0.1 };
    expect(startHereVerdict({ ...high, episodes: 400 })).toMatch(/±3 points .* run seeds 2 and 3/);
  });

  it("gives the seed link it is handed (another environment's carries env=), naming no environment itself", () => {
    const v = { real: run(0.3, 6000), dream: run(0.2, 0), s2r: run(0.3, 600), untrained: 0, episodes: 100 };
    const link = '#/start?env=some-env&seed=S';
    expect(startHereVerdict({ ...v, seedLink: link })).toMatch(
      /run seeds 2 and 3 \(#\/start\?env=some-env&seed=S\) to see/,
    );
    expect(startHereVerdict(v)).toMatch(/run seeds 2 and 3 \(#\/start\?seed=S\) to see/);
  });

  it('a dream that wins, and S2R above real with a share of its steps', () => {
    const text = startHereVerdict({ real: run(0.5, 4000), dream: run(0.46, 0), s2r: run(0.56, 600), untrained: 0.14 });
    expect(text).toBe(
      "With 0 real steps the dream reached 46% held-out success, from the untrained policy's 14%, 92% of real " +
        "RL's 50% (after 4,000 real steps) — within DreamGym's mark of 80% of real. S2R reached 56% with 600 real steps, " +
        "15% of the baseline's: 6 points above real RL.",
    );
  });

  it('is as plain when the dream loses', () => {
    const text = startHereVerdict({
      real: run(0.66, 1986),
      dream: run(0.22, 0),
      s2r: run(0.36, 300),
      untrained: 0.14,
    })!;
    expect(text).toMatch(
      /dream reached 22% .* 33% of real RL's 66% .* short of DreamGym's mark of 80% of real: the dream lost here\./,
    );
    expect(text).toMatch(/S2R reached 36% with 300 real steps, 15% of the baseline's: 30 points below real RL\.$/);
    // One point, not "1 points".
    expect(startHereVerdict({ real: run(0.46, 2812), dream: run(0.29, 0), s2r: run(0.45, 600), untrained: 0 })).toMatch(
      /S2R reached 45% with 600 real steps, 21% of the baseline's: 1 point below real RL\.$/,
    );
  });

  it('a dream no better than the untrained policy says it taught nothing', () => {
    expect(startHereVerdict({ real: run(0.6, 2000), dream: run(0, 0), s2r: run(0, 300), untrained: 0.1 })).toMatch(
      /^With 0 real steps the dream reached 0% held-out success, from the untrained policy's 10%: the dream taught the agent nothing/,
    );
  });

  it('a dream as good as real, real at 0%, and no verdict before the end or after a failure', () => {
    expect(
      startHereVerdict({ real: run(0.4, 2000), dream: run(0.45, 0), s2r: run(0.4, 200), untrained: null }),
    ).toMatch(/113% of real RL's 40% .* as good as real RL or better\. .*: as good as real RL\.$/);
    expect(startHereVerdict({ real: run(0, 2000), dream: run(0.1, 0), s2r: run(0, 200), untrained: 0 })).toMatch(
      /real RL reached 0%/,
    );
    expect(
      startHereVerdict({ real: run(0.4, 2000), dream: run(null, 0), s2r: run(0.4, 200), untrained: 0.1 }),
    ).toBeNull();
    expect(
      startHereVerdict({
        real: run(0.4, 2000),
        dream: { ...run(null, 0), failure: 'engine down' },
        s2r: run(0.4, 200),
        untrained: 0.1,
      }),
    ).toBe('No verdict: the dream run failed (see the card).');
  });
});
