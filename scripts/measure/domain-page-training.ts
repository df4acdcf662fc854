// Measures the Domains page's experience-model training of an imported file — figures: docs/results/imported-domains.md.
/**
 * Issue 45's speed goal in the page: the Domains page trains the experience model of an imported
 * file, as a user runs it. The built app (`npm run build` first) served by vite preview, headless
 * Chromium with a fresh profile at 1280×720: the file is picked and imported, the model trained at
 * the page's size with the epochs asked for, and the time from the click to "Trained" printed with
 * the page's pairs line and its last progress line (tokens/s measured in the page).
 *
 *   npm run build && node --import tsx scripts/measure/domain-page-training.ts FILE [--epochs N] [--size S]
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { openChromium, previewBuiltApp } from '../../src/bench/node/chromium-launch';

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function measure(baseUrl: string, file: string, epochs: string, size: string | undefined): Promise<void> {
  const browser = await openChromium('dreamgym-domain-page-');
  try {
    const page = await browser.context.newPage();
    await page.goto(`${baseUrl}/#/domains`);
    await page.getByTestId('domain-file').setInputFiles({
      name: basename(file),
      mimeType: 'application/json',
      buffer: readFileSync(file),
    });
    const imported = Date.now();
    await page.getByRole('button', { name: 'Import as a domain' }).click();
    await page.getByTestId('domain-path').waitFor({ timeout: 300_000 });
    console.log(`import: ${((Date.now() - imported) / 1000).toFixed(1)} s after the click`);
    if (size) await page.getByTestId('model-size').selectOption(size);
    await page.getByLabel('Epochs', { exact: true }).fill(epochs);
    const clicked = Date.now();
    await page.getByRole('button', { name: 'Train the model' }).click();
    let progress = '';
    while (Date.now() - clicked < 3_600_000) {
      const running = await page.getByTestId('domain-path').getAttribute('data-running');
      const text = await page
        .getByTestId('model-progress')
        .textContent({ timeout: 1000 })
        .catch(() => null);
      if (text) progress = text;
      if (running === 'none' && Date.now() - clicked > 2000) break;
      await page.waitForTimeout(2000);
    }
    const seconds = (Date.now() - clicked) / 1000;
    const errors = await page.getByTestId('path-error').allTextContents();
    console.log(`trained: ${seconds.toFixed(1)} s after the click`);
    console.log(`stage: ${await page.getByTestId('path-stage').textContent()}`);
    console.log(
      `model: ${await page
        .getByTestId('model-summary')
        .textContent()
        .catch(() => '—')}`,
    );
    console.log(
      `pairs: ${await page
        .getByTestId('pairs-line')
        .textContent()
        .catch(() => '—')}`,
    );
    console.log(`last progress: ${progress}`);
    if (errors.length) console.log(`errors: ${errors.join(' | ')}`);
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file || file.startsWith('--')) throw new Error('usage: domain-page-training.ts FILE [--epochs N] [--size S]');
  const app = await previewBuiltApp();
  try {
    await measure(app.baseUrl, file, argValue('--epochs') ?? '12', argValue('--size'));
  } finally {
    await app.close();
  }
}

await main();
