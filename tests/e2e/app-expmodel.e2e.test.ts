/**
 * End to end, the learned experience model in the page (the production build in Debian's
 * Chromium, SwiftShader WebGPU): the Experience model page loads the shipped datasets into the
 * buffer, trains a TINY model in its worker (auto backend: SwiftShader is a software adapter, so
 * wasm, and the page says why), with the progress bar (its time left measured here) and the live
 * loss chart; Stop (confirmed where it asks) keeps the last epoch's checkpoint and stores its best
 * epoch as the model, and after a reload Resume finishes the training; then the fidelity audit
 * against the real env and the dreamed-vs-real examples render. The model is then the dream engine
 * of a one-iteration dream run on Train (learned:local/<name>), offered on Setup, and the LLM
 * prior is refused with it. A shipped model (models/<env>/, here a tiny one trained in this Node
 * process and served by the test) is offered on Train, dreams a run in the trainer worker and is
 * audited on the Experience model page. Screenshots: model.png, model-loss.png, model-audit.png,
 * model-samples.png, train-learned.png, train-shipped.png.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright';
import { openPage, SHOTS, useApp } from './harness';
import { builtInDomainCard } from '../../src/core/experience/domain-card';
import { trainLearnedModel } from '../../src/core/experience/learned/train-model';
import { initBackend } from '../../src/core/tfjs/backend';
import { trainOptions } from '../../src/app/workers/expmodel/expmodel-host';
import { ENV, fixtureBuffer, tinySettings } from '../unit/app/learned-fixtures';

const app = useApp('dreamgym-e2e-expmodel-');

const NAME = 'tiny-e2e';
const state = (page: Page) => page.getByTestId('expmodel-status').getAttribute('data-state');
const epochsCharted = async (page: Page) => Number(await page.getByTestId('loss-chart').getAttribute('data-epochs'));
const count = async (page: Page, testid: string) =>
  Number((await page.getByTestId(testid).textContent())!.replace(/\D/g, ''));

describe('the learned experience model in the page', () => {
  it('trains a tiny model in a worker (stop, reload, resume), audits it, and shows dreamed vs real', async () => {
    const { page, errors } = await openPage(app.context);
    // Tiny: a 16-wide network on 8 episodes, 3 epochs, a 12-transition audit and 3 examples.
    await page.goto(`${app.baseUrl}/#/model?env=webshop-lite-v0&size=tiny&name=${NAME}&epochs=3&backend=auto`);
    await expect.poll(() => page.getByTestId('real-transitions-webshop-lite-v0').count(), { timeout: 60_000 }).toBe(1);
    await page.getByRole('button', { name: 'Load the shipped datasets' }).click();
    await expect.poll(() => count(page, 'real-transitions-webshop-lite-v0'), { timeout: 90_000 }).toBeGreaterThan(1000);
    await expect.poll(() => page.getByLabel('Size').inputValue()).toBe('tiny');
    // Before training: an estimate from the chosen data and this machine's speed, checked once the data is loaded
    // (the e2e check of its figure against the actual time: app-expmodel-estimate.e2e.test.ts).
    await expect
      .poll(() => page.getByTestId('train-estimate').getAttribute('data-basis'), { timeout: 30_000 })
      .toBe('speed-check');
    const estimate = (await page.getByTestId('train-estimate').textContent())!;
    expect(estimate).toMatch(
      /^\s*Estimate: .* for 3 epochs at most \(early stopping may end sooner\) of ≈ [\d,]+ tokens/,
    );
    expect(estimate).toMatch(/tokens\/s — from this machine's speed, checked just now for a second, and the tiny size/);

    await page.getByRole('button', { name: 'Train', exact: true }).click();
    await expect.poll(() => page.getByTestId('expmodel-backend').textContent(), { timeout: 60_000 }).toBe('wasm');
    const reason = (await page.getByTestId('expmodel-backend-reason').textContent())!;
    console.log(`[expmodel] backend reason: ${reason}`);
    expect(reason).toMatch(/auto: the WebGPU adapter is a software one .* so wasm/);
    // The progress bar with the time left, and the live loss chart.
    await expect
      .poll(() => page.getByTestId('train-progress-line').textContent(), { timeout: 90_000 })
      .toMatch(/epoch \d of 3, batch \d+ of \d+ .* (left at most|estimating)/);
    await expect.poll(() => page.getByTestId('checkpoint-epochs').textContent(), { timeout: 90_000 }).toBe('1');
    expect(await epochsCharted(page)).toBeGreaterThanOrEqual(1);
    console.log(`[expmodel] after epoch 1: ${await page.getByTestId('train-progress-line').textContent()}`);

    // Stop: it asks first only when it would lose 10 s of training or more (a tiny epoch is shorter); the epoch
    // checkpoint stays, its best epoch is stored as the model, and a reload offers to resume it.
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    const confirm = page.getByRole('button', { name: /^Stop and keep epoch \d+$/ });
    if (await confirm.count()) await confirm.click();
    await expect
      .poll(() => page.getByTestId('expmodel-status').textContent(), { timeout: 60_000 })
      .toMatch(new RegExp(`stored as learned:local/${NAME}, usable now`));
    expect(await state(page)).toBe('stopped');
    // No progress line is left behind, as if the stopped training went on.
    expect(await page.getByTestId('train-progress').count()).toBe(0);
    const stoppedAt = Number(await page.getByTestId('checkpoint-epochs').textContent());
    expect(stoppedAt).toBeGreaterThanOrEqual(1);
    expect(stoppedAt).toBeLessThan(3);
    await expect
      .poll(() => page.getByTestId('expmodel-status').textContent())
      .toMatch(new RegExp(`checkpoint after epoch ${stoppedAt} stays in this browser`));
    const keptRow = page.locator(`[data-testid="local-models"] tr[data-model="${NAME}"]`);
    await expect
      .poll(() => keptRow.textContent(), { timeout: 30_000 })
      .toMatch(new RegExp(`${stoppedAt} of 3 epochs \\(stopped\\)`));
    await page.reload();
    const resume = page.getByRole('button', { name: `Resume training ${NAME}` });
    await expect.poll(() => resume.count(), { timeout: 30_000 }).toBe(1);
    await expect
      .poll(() => page.getByRole('region', { name: `Unfinished training ${NAME}` }).textContent())
      .toMatch(new RegExp(`${stoppedAt} of 3 epochs done`));
    await resume.click();
    // The chart continues from the checkpoint's epochs, training finishes, then the audit runs.
    await expect.poll(() => epochsCharted(page), { timeout: 30_000 }).toBeGreaterThanOrEqual(stoppedAt);
    await expect.poll(() => page.getByTestId('evaluation').count(), { timeout: 180_000 }).toBe(1);
    expect(await epochsCharted(page)).toBe(3);
    expect(await page.getByTestId('expmodel-status').textContent()).toMatch(
      /Evaluated learned tiny-e2e \(k=4, H=4, T=0.7\) on 12 held-out transitions/,
    );

    // The fidelity audit against the real env, beside the oracle.
    const table = page.getByTestId('audit-table');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(8);
    for (const metric of [
      'reward_accuracy',
      'terminated_accuracy',
      'admissible_jaccard',
      'observation_f1',
      'invalid_rate',
    ]) {
      const cell = (await table.locator(`tr[data-metric="${metric}"] [data-testid="audit-learned"]`).textContent())!;
      expect(cell, metric).toMatch(/^\d\.\d{3}$|no outcome step sampled/);
    }
    console.log(`[expmodel] audit: ${(await table.locator('tbody').innerText()).split('\n').slice(0, 10).join(' | ')}`);
    // Held-out transitions dreamed beside what really happened.
    await expect.poll(() => page.getByTestId('dream-sample').count()).toBe(3);
    await expect.poll(() => page.getByTestId('real-observation').count()).toBe(3);
    expect((await page.getByTestId('real-observation').first().textContent())!.length).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('agree-reward').first().textContent()).toMatch(/agrees|differs/);
    // The stored model is listed, with a link to dream with it.
    await expect.poll(() => page.locator(`[data-testid="local-models"] tr[data-model="${NAME}"]`).count()).toBe(1);
    await expect.poll(() => page.getByRole('button', { name: `Resume training ${NAME}` }).count()).toBe(0);

    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/model.png` });
    await page.getByTestId('loss-chart').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/model-loss.png` });
    await page.getByTestId('evaluation').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/model-audit.png`, fullPage: false });
    await page.getByTestId('dream-sample').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/model-samples.png` });
    // Its link opens Train with it as the dream engine (a followed link sets the form).
    await page.getByRole('link', { name: `Dream with ${NAME} on Train` }).click();
    await expect
      .poll(() => page.getByLabel('Dream engine').inputValue(), { timeout: 30_000 })
      .toBe(`learned:local/${NAME}`);
    await expect.poll(() => page.getByLabel('Mode').inputValue()).toBe('dream');
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);

  it('dreams one iteration on Train with learned:local/NAME; the LLM prior is refused with it; Setup offers it', async () => {
    const { page, errors } = await openPage(app.context);
    const spec = `learned:local/${NAME}`;
    const tiny = 'preset=webshop-easy&mode=dream&size=tiny&tasks=1&group=2&iterations=1&evalEvery=0&curriculum=0';
    // A link asking for the LLM prior with a learned model: refused on the page, with the reason.
    await page.goto(`${app.baseUrl}/#/train?${tiny}&llm=${encodeURIComponent(spec)}&prior=1`);
    await expect.poll(() => page.getByLabel('Dream engine').inputValue(), { timeout: 60_000 }).toBe(spec);
    await expect
      .poll(() => page.getByRole('checkbox', { name: 'LLM prior', includeHidden: true }).isDisabled())
      .toBe(true);
    await page.getByRole('button', { name: 'Start' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/The LLM prior needs a chat model, and the chosen engine is not one\. The learned experience model/);

    await page.goto(`${app.baseUrl}/#/train?${tiny}&llm=${encodeURIComponent(spec)}&prior=0`);
    await page.reload();
    await expect.poll(() => page.getByLabel('Dream engine').inputValue(), { timeout: 60_000 }).toBe(spec);
    const label = await page.locator('#dream-engine option:checked').textContent();
    expect(label).toMatch(
      new RegExp(`^learned experience model \\(tfjs, not a chat model\\): '${NAME}', trained in this browser`),
    );
    await expect
      .poll(() =>
        page
          .locator('#dream-engine option', { hasText: 'noisy oracle — teaching option, not a language model' })
          .count(),
      )
      .toBe(1);
    await expect
      .poll(() => page.getByTestId('experience-source').textContent())
      .toBe(`Experience: dream: learned model at local/${NAME}.`);
    await expect.poll(() => page.getByTestId('engine-abilities').textContent()).toMatch(/not a chat model/);
    await page.getByRole('button', { name: 'Start' }).click();
    await expect
      .poll(() => page.getByTestId('train-status').getAttribute('data-state'), { timeout: 120_000 })
      .toBe('finished');
    expect(await count(page, 'dream-steps')).toBeGreaterThan(0);
    expect(await page.getByTestId('real-steps').textContent()).toBe('0');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/train-learned.png` });

    // Setup: the learned model is an engine choice of its own, labelled as one.
    await page.goto(`${app.baseUrl}/#/setup`);
    await page.getByRole('radio', { name: /Learned experience model \(tfjs, trained on the buffer\)/ }).check();
    const mine = page.getByRole('radio', { name: new RegExp(`'${NAME}', trained in this browser`) });
    await expect.poll(() => mine.count(), { timeout: 30_000 }).toBe(1);
    await mine.check();
    await expect
      .poll(() => page.getByTestId('engine-chosen').textContent())
      .toBe(`learned experience model (tfjs, not a chat model): '${NAME}', trained in this browser`);
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);
});

describe('a shipped learned model (models/<env>/ of the app)', () => {
  // The service worker is kept out so that the test's routes see the workers' requests too.
  const shipped = useApp('dreamgym-e2e-expmodel-shipped-', { serviceWorkers: 'block' });
  const served: string[] = [];

  beforeAll(async () => {
    await initBackend('wasm');
    const result = await trainLearnedModel(
      await fixtureBuffer(),
      ENV,
      builtInDomainCard(ENV)!,
      trainOptions(tinySettings({ name: 'shipped-tiny' })),
    );
    result.network.dispose();
    await shipped.context.route(`**/models/${ENV}/*`, (route) => {
      const url = route.request().url();
      served.push(url.slice(url.lastIndexOf('/') + 1));
      if (url.endsWith('/model.json'))
        return route.fulfill({ status: 200, contentType: 'application/json', body: result.manifest });
      if (url.endsWith('/weights.bin'))
        return route.fulfill({
          status: 200,
          contentType: 'application/octet-stream',
          body: Buffer.from(result.weights),
        });
      return route.fulfill({ status: 404, body: 'not found' });
    });
  }, 120_000);

  it('is offered on Train as a learned model, dreams a run in the trainer worker, and is audited on the Experience model page', async () => {
    const { page, errors } = await openPage(shipped.context);
    const spec = `learned:models/${ENV}`;
    await page.goto(
      `${shipped.baseUrl}/#/train?preset=webshop-easy&mode=dream&size=tiny&tasks=1&group=2&iterations=1&evalEvery=0&curriculum=0`,
    );
    const option = page.locator(`#dream-engine option[value="${spec}"]`);
    await expect.poll(() => option.count(), { timeout: 60_000 }).toBe(1);
    expect(await option.textContent()).toBe(
      `learned experience model (tfjs, not a chat model): shipped for ${ENV} (6 training episodes)`,
    );
    await page.getByLabel('Dream engine').selectOption(spec);
    await expect
      .poll(() => page.getByRole('checkbox', { name: 'LLM prior', includeHidden: true }).isDisabled())
      .toBe(true);
    await expect
      .poll(() => page.getByTestId('experience-source').textContent())
      .toBe(`Experience: dream: learned model at models/${ENV}.`);
    expect(page.url()).toContain(`llm=${encodeURIComponent(spec)}`);
    const before = served.length;
    await page.getByRole('button', { name: 'Start' }).click();
    await expect
      .poll(() => page.getByTestId('train-status').getAttribute('data-state'), { timeout: 120_000 })
      .toBe('finished');
    expect(Number((await page.getByTestId('dream-steps').textContent())!.replace(/\D/g, ''))).toBeGreaterThan(0);
    // The page says where the learned model decoded: web workers on a device with two cores or more.
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    const decoding = cores >= 2 ? /^Decoding on [2-4] web workers \(this device reports \d+ cores/ : /^Decoding in/;
    expect(await page.getByTestId('decoding').textContent()).toMatch(decoding);
    // The trainer worker fetched both files from the app.
    expect(served.slice(before)).toEqual(expect.arrayContaining(['model.json', 'weights.bin']));
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}/train-shipped.png` });

    await page.goto(`${shipped.baseUrl}/#/model?size=tiny`);
    await page.getByRole('button', { name: `Audit the shipped ${ENV} model` }).click();
    await expect.poll(() => page.getByTestId('evaluation').count(), { timeout: 120_000 }).toBe(1);
    await expect
      .poll(() =>
        page.getByRole('heading', { name: /Fidelity against the real environment: learned shipped-tiny/ }).count(),
      )
      .toBe(1);
    await expect.poll(() => page.getByTestId('audit-table').locator('tbody tr').count()).toBe(8);
    const speed = page.getByTestId('audit-speed');
    expect(await speed.textContent()).toMatch(
      /^Speed: 12 predictions in [\d.]+ s, asked \d+ at a time: [\d.]+ transitions\/s\. Decoding/,
    );
    expect(Number(await speed.getAttribute('data-rate'))).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('dream-sample').count()).toBe(3); // size=tiny: 3 examples
    await expect
      .poll(() => page.getByTestId('shipped-models').textContent())
      .toMatch(/shipped for household-v0: \d+ training episodes/); // the real shipped one (not routed)
    expect(errors).toEqual([]);
    await page.close();
  }, 240_000);
});
