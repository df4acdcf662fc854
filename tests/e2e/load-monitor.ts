/**
 * Whether this machine's speed held through a timed stretch of an e2e test: the speed check of
 * src/app/state/shared/machine-speed.ts, 100 ms of it every second in this Node process, beside the
 * browser. The page's own check before and after a run cannot see the load change in the middle
 * (measured: a training slow in its first half and fast in its second, with the page's checks
 * 355,232 and 318,305 rounds/s, made its time left 1.5× the actual halfway through).
 */
import { measureSpeed } from '../../src/app/state/shared/machine-speed';

const yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));

export class LoadMonitor {
  private readonly samples: number[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  constructor() {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.samples.push(
        await measureSpeed({ clock: () => performance.now(), yieldNow, budgetMs: 100, chunkRounds: 50 }),
      );
      await new Promise((resolve) => setTimeout(resolve, 900));
    }
  }

  /** Stops sampling; returns the mean speed of the first and the second half of the samples. */
  async stop(): Promise<[number, number]> {
    this.stopped = true;
    await this.done;
    const half = Math.floor(this.samples.length / 2);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    return [Math.round(mean(this.samples.slice(0, half))), Math.round(mean(this.samples.slice(half)))];
  }
}
