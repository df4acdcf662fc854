// Measures the page's start-here path per seed, as a newcomer runs it — figures: docs/results/start-here.md.
/**
 * The start-here path measured in the page, as a newcomer runs it: the built app (`npm run build`
 * first) served by vite preview, headless Chromium with a fresh profile at 1280×720 for each seed,
 * nothing loaded by hand. Seed 1 is the plain button; other seeds come from the page's link
 * (`#/start?seed=S`); --env E picks another environment the page offers (`#/start?env=E`). For each seed it prints the three runs' held-out success, real and dream
 * steps, when each finished after the click, and the page's verdict sentence; with --shots it
 * saves before / during / after screenshots in test-output/screenshots/ (during: a third of the way
 * through by the page's own estimate, at most a minute after the click).
 *
 *   npm run build && node --import tsx scripts/measure/start-here-page.ts --seeds 1,2,3 [--env E] [--shots]
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright';
import { openChromium, previewBuiltApp } from '../../src/bench/node/chromium-launch';

const MODES = ['real', 'dream', 's2r'] as const;
const SHOTS = 'test-output/screenshots';

interface SeedResult {
  seed: number;
  runs: Record<string, { heldOut: string; realSteps: string; dreamSteps: string; finishedAfterSeconds: number | null }>;
  allFinishedSeconds: number | null;
  /** The page's estimate of the group's time before the click (its speed check), in seconds. */
  expectedSeconds: number | null;
  verdict: string | null;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The page's link for a seed and an environment (none: the page's default environment and seed 1). */
function startLink(baseUrl: string, seed: number, env: string | undefined): string {
  const query = [...(env ? [`env=${env}`] : []), ...(seed === 1 ? [] : [`seed=${seed}`])].join('&');
  return `${baseUrl}/#/start${query ? `?${query}` : ''}`;
}

async function measureSeed(
  baseUrl: string,
  seed: number,
  env: string | undefined,
  shots: boolean,
  limitMs: number,
): Promise<SeedResult> {
  const browser = await openChromium('dreamgym-start-page-');
  try {
    const page = await browser.context.newPage();
    await page.goto(startLink(baseUrl, seed, env));
    await page.getByTestId('start-three').waitFor({ timeout: 60_000 });
    // The page's first estimate (its speed check, about a second) is part of the before shot.
    const expected = await page
      .getByTestId('start-expected')
      .getAttribute('data-seconds', { timeout: 30_000 })
      .then(Number)
      .catch(() => NaN);
    if (shots) await page.screenshot({ path: `${SHOTS}/start-page-before.png` });
    // The during shot: a third of the way through by the page's estimate, at most a minute after the click.
    const duringAfterMs = Number.isFinite(expected) ? Math.min(60_000, (expected * 1000) / 3) : 60_000;
    const clicked = Date.now();
    await page.getByTestId('start-three').click();
    const finished: Record<string, number | null> = { real: null, dream: null, s2r: null };
    let duringShot = !shots;
    while (Date.now() - clicked < limitMs) {
      const states = await cardStates(page);
      for (const mode of MODES)
        if (finished[mode] === null && states[mode] === 'finished') finished[mode] = (Date.now() - clicked) / 1000;
      if (MODES.some((m) => states[m] === 'error')) break;
      if (!duringShot && Date.now() - clicked > duringAfterMs) {
        await page.screenshot({ path: `${SHOTS}/start-page-during.png` });
        duringShot = true;
      }
      if (MODES.every((m) => finished[m] !== null)) break;
      await page.waitForTimeout(1000);
    }
    if (shots) await page.screenshot({ path: `${SHOTS}/start-page-after.png` });
    const runs: SeedResult['runs'] = {};
    for (const mode of MODES) {
      const cell = (id: string) =>
        page.locator(`[data-testid="dreamgym-table"] tr[data-mode="${mode}"] [data-testid="${id}"]`).textContent();
      const card = page.locator(`[data-testid="start-run"][data-mode="${mode}"]`);
      runs[mode] = {
        heldOut: (await cell('dreamgym-success')) ?? '—',
        realSteps: (await cell('dreamgym-real-steps')) ?? '—',
        dreamSteps: (await card.locator('dd').nth(2).textContent()) ?? '—',
        finishedAfterSeconds: finished[mode],
      };
    }
    const verdict = await page
      .getByTestId('start-verdict')
      .textContent({ timeout: 5000 })
      .catch(() => null);
    const all = MODES.every((m) => finished[m] !== null) ? Math.max(...MODES.map((m) => finished[m]!)) : null;
    return {
      seed,
      runs,
      allFinishedSeconds: all,
      expectedSeconds: Number.isFinite(expected) ? expected : null,
      verdict,
    };
  } finally {
    await browser.close();
  }
}

async function cardStates(page: Page): Promise<Record<string, string | null>> {
  const states: Record<string, string | null> = {};
  for (const mode of MODES)
    states[mode] = await page
      .locator(`[data-testid="start-run"][data-mode="${mode}"]`)
      .getAttribute('data-state')
      .catch(() => null);
  return states;
}

async function main(): Promise<void> {
  const seeds = (argValue('--seeds') ?? '1').split(',').map(Number);
  const shots = process.argv.includes('--shots');
  const env = argValue('--env');
  const limitMs = Number(argValue('--limit-minutes') ?? 15) * 60_000;
  mkdirSync(SHOTS, { recursive: true });
  const app = await previewBuiltApp();
  try {
    for (const seed of seeds) {
      const result = await measureSeed(app.baseUrl, seed, env, shots && seed === seeds[0], limitMs);
      const cells = MODES.map(
        (m) =>
          `${result.runs[m].heldOut} (${result.runs[m].realSteps} real, finished ${result.runs[m].finishedAfterSeconds ?? '—'} s)`,
      );
      console.log(
        `seed ${seed}: real ${cells[0]}; dream ${cells[1]}; s2r ${cells[2]}; all finished after ` +
          `${result.allFinishedSeconds ?? 'not finished'} s (estimated before the click: ${result.expectedSeconds ?? '—'} s)`,
      );
      console.log(`  verdict: ${result.verdict ?? '—'}`);
      console.log(JSON.stringify(result));
    }
  } finally {
    await app.close();
  }
}

await main();
