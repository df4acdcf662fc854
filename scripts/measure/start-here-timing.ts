// Measures the start-here group's work in speed-check units (START_HERE_WORK) — figures: docs/results/start-here.md.
/**
 * Measures the start-here group's work in the page, in units of the speed check's work
 * (src/app/state/shared/machine-speed.ts), for START_HERE_WORK in src/app/state/start/start-here-estimate.ts:
 * the built app (`npm run build` first, or --out DIR of a build) in headless Chromium with a fresh
 * profile at 1280×720, the page's own speed check read just before the click, then each run's
 * iteration records timed as they arrive (polled every 100 ms), and when each iteration's rollout
 * began (the live progress). Prints, per size, the seconds after the click and the work (seconds ×
 * the score) of each, and when each run finished.
 *
 *   npm run build && node --import tsx scripts/measure/start-here-timing.ts --iterations 2,30
 */
import type { Page } from 'playwright';
import { openChromium, previewBuiltApp } from '../../src/bench/node/chromium-launch';
import { START_HERE_SIZE } from '../../src/app/state/start/start-here';

interface Slot {
  entry: { config: { mode: string } };
  status: { state: string };
  history: { iteration: number }[];
  live: { iteration: number; stage: string } | null;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const slotsOf = (page: Page) =>
  page.evaluate(
    () => (window as unknown as { __dreamgym: { startHere: { slots: unknown[] } } }).__dreamgym.startHere.slots,
  ) as Promise<Slot[]>;

async function timeGroup(baseUrl: string, iterations: number): Promise<void> {
  const browser = await openChromium('dreamgym-start-timing-');
  try {
    const page = await browser.context.newPage();
    // The button's size needs no link (the link only shortens: #/start?iterations=N below the button's).
    const link = iterations === START_HERE_SIZE.iterations ? '' : `?iterations=${iterations}`;
    await page.goto(`${baseUrl}/#/start${link}`);
    await page.getByTestId('start-expected').waitFor({ timeout: 60_000 });
    const score = await page.evaluate(
      () =>
        (window as unknown as { __dreamgym: { startHere: { clock: { score: number } } } }).__dreamgym.startHere.clock
          .score,
    );
    const clicked = Date.now();
    await page.getByTestId('start-three').click();
    const seen = new Map<string, number>();
    const rows: string[] = [];
    for (;;) {
      const slots = await slotsOf(page);
      const t = (Date.now() - clicked) / 1000;
      for (const s of slots) {
        const mode = s.entry.config.mode;
        for (const r of s.history) {
          const key = `${mode} ${r.iteration}`;
          if (seen.has(key)) continue;
          seen.set(key, t);
          rows.push(`${key}: ${t.toFixed(1)} s, work ${Math.round(t * score)}`);
        }
        const begun = s.live?.stage === 'rollout' ? `${mode} ${s.live.iteration} rollout begun` : null;
        if (begun && !seen.has(begun)) {
          seen.set(begun, t);
          rows.push(`${begun}: ${t.toFixed(1)} s, work ${Math.round(t * score)}`);
        }
        if (s.status.state === 'finished' && !seen.has(`${mode} finished`)) {
          seen.set(`${mode} finished`, t);
          rows.push(`${mode} finished: ${t.toFixed(1)} s, work ${Math.round(t * score)}`);
        }
      }
      if (slots.length === 3 && slots.every((s) => s.status.state === 'finished')) break;
      if (slots.some((s) => s.status.state === 'error') || t > 900) throw new Error(`the group did not finish: ${t} s`);
      await page.waitForTimeout(100);
    }
    console.log(`iterations ${iterations}, score ${Math.round(score)} rounds/s`);
    for (const row of rows) console.log(`  ${row}`);
  } finally {
    await browser.close();
  }
}

const sizes = (argValue('--iterations') ?? `2,${START_HERE_SIZE.iterations}`).split(',').map(Number);
const app = await previewBuiltApp(argValue('--out'));
try {
  for (const n of sizes) await timeGroup(app.baseUrl, n);
} finally {
  await app.close();
}
