/**
 * End to end, a real LLM a user can wait for (issue 14): wllama on the CPU with the tiny
 * ../shared/models/stories260K.gguf (a 260K-parameter story model: it mostly answers junk, which
 * is what the invalid-step views need). Skipped, with a note saying why, when the file is absent.
 *
 * - Setup's "Try one step": the engine predicts one transition from a real state; the prompt, the
 *   raw answer and the real environment's result are shown.
 * - Train: within the first iteration, the live dream-step counter, tokens/s and time left update
 *   before the iteration ends.
 * - Inspect: an invalid dreamed step shows the model's raw answer and why it was rejected, and its
 *   reasoning box does not contradict its Valid field.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPage, SHOTS, useApp } from './harness';

const MODEL_PATH = resolve(process.cwd(), '../shared/models/stories260K.gguf');
const MODEL_PRESENT = existsSync(MODEL_PATH);
const SKIP_NOTE =
  `${MODEL_PATH} is absent (../shared/models/stories260K.gguf from the repo root); ` + 'the live-progress e2e needs it';

const app = useApp('dreamgym-e2e-llm-live-', { when: MODEL_PRESENT, startTimeoutMs: 180_000 });

describe('wllama with stories260K.gguf: try one step, live progress, the answer in view', () => {
  it(
    'Try one step shows the prompt, the raw answer and the real result; Train updates live; ' +
      'Inspect shows why a step is invalid',
    async ({ skip }) => {
      skip(!MODEL_PRESENT, SKIP_NOTE);
      const { page, errors } = await openPage(app.context);
      await page.goto(`${app.baseUrl}/#/setup`);
      await page.getByLabel('wllama (CPU, a GGUF file)').check();
      await page.getByTestId('gguf-file').setInputFiles(MODEL_PATH);
      await expect
        .poll(() => page.getByTestId('engine-message').textContent(), { timeout: 30_000 })
        .toMatch(/stories260K\.gguf is stored in this browser/);

      // ---- Setup: Try one step ----------------------------------------------------------------
      const card = page.getByTestId('try-step');
      await card.getByLabel('Environment').selectOption('webshop-lite-v0');
      await card.getByRole('button', { name: 'Try one step' }).click();
      await expect
        .poll(
          async () => (await page.getByTestId('try-result').count()) + (await page.getByTestId('try-error').count()),
          { timeout: 120_000 },
        )
        .toBe(1);
      expect(
        await page.getByTestId('try-error').count(),
        (await page.getByTestId('try-error').allTextContents()).join(' '),
      ).toBe(0);
      const result = page.getByTestId('try-result');
      await expect.poll(() => result.textContent()).toMatch(/wllama stories260K\.gguf/);
      await expect.poll(() => page.getByTestId('try-action').textContent()).toMatch(/^search\[/);
      // The prompt (collapsed), the raw answer of every call, the real environment's result.
      await page.getByTestId('answer-prompt').locator('summary').click();
      await expect
        .poll(() => page.getByTestId('answer-prompt').textContent())
        .toMatch(/\[system\]\nYou simulate the environment of an RL agent.*\[user\]\nTask: /s);
      expect(await result.getByTestId('answer-raw').count()).toBeGreaterThan(0);
      expect(await page.getByTestId('try-real').count()).toBeGreaterThan(0);
      await expect.poll(() => page.getByTestId('try-real-next').textContent()).toMatch(/Page 1 \(Total results: \d+\)/);
      await expect
        // What the page shows (innerText collapses the template's line breaks, as the browser renders them).
        .poll(() => page.getByTestId('try-cost').innerText())
        .toMatch(/^\d[\d,]* prompt \+ \d[\d,]* answer tokens,\s+\d[\d,]* ms/);
      console.log(
        `[try] ${(await page.getByTestId('try-cost').textContent())!.replace(/\s+/g, ' ')}; raw: ${(await result.getByTestId('answer-raw').first().textContent())!.slice(0, 120)}`,
      );
      await card.evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: `${SHOTS}/setup-try-step.png` });

      // ---- Train: live progress inside the first iteration --------------------------------------
      await page.goto('about:blank');
      await page.goto(
        `${app.baseUrl}/#/train?preset=webshop-llm-demo&mode=dream&algo=ppo&seed=4&tasks=1&group=2&iterations=1&evalEvery=0&evalEpisodes=1` +
          '&llm=wllama:file:stories260K.gguf&k=1&history=2&tokens=64&retries=1',
      );
      await expect.poll(() => page.getByLabel('Dream engine').inputValue()).toBe('wllama:file:stories260K.gguf');
      await expect
        .poll(() => page.getByTestId('dream-estimate').textContent())
        .toMatch(
          /^Estimate: ≈ \d+ dreamed transitions \(at most 30\) in 1 iterations.*measured: Try one step.*Every figure is an estimate\.$/,
        );
      await page.getByRole('button', { name: 'Start' }).click();
      const seen = { steps: new Set<string>(), tokens: new Set<string>(), left: new Set<string>() };
      const deadline = Date.now() + 180_000;
      while (Date.now() < deadline) {
        const state = await page.getByTestId('train-status').getAttribute('data-state');
        if (state === 'finished' || state === 'error') break;
        if (
          (await page.getByTestId('live-progress').count()) &&
          (await page.getByTestId('iteration').textContent()) === '0'
        ) {
          const read = async (id: string) =>
            (await page
              .getByTestId(id)
              .textContent()
              .catch(() => null)) ?? '';
          seen.steps.add(await read('live-steps'));
          seen.tokens.add(await read('live-tokens-per-second'));
          seen.left.add(await read('live-iteration-left'));
          if (seen.steps.size === 3) await page.screenshot({ path: `${SHOTS}/train-live.png` });
        }
        await page.waitForTimeout(400);
      }
      console.log(
        `[live] steps ${[...seen.steps].join(' | ')}; tokens/s ${[...seen.tokens].join(' | ')}; left ${[...seen.left].join(' | ')}`,
      );
      expect(
        await page.getByTestId('train-status').getAttribute('data-state'),
        (await page.getByTestId('train-status').textContent()) ?? '',
      ).toBe('finished');
      // Before the first iteration ended: the counter moved, tokens/s was measured, the time left was estimated and changed.
      expect(seen.steps.size).toBeGreaterThanOrEqual(3);
      expect([...seen.tokens].some((t) => /^\d/.test(t) && t !== '0.00')).toBe(true);
      expect([...seen.left].filter((t) => t.startsWith('≈')).length).toBeGreaterThanOrEqual(2);

      // ---- Inspect: an invalid step's raw answer and why it was rejected -----------------------
      await page.getByRole('link', { name: 'Inspect', exact: true }).click();
      await expect.poll(() => page.getByTestId('episode').count(), { timeout: 30_000 }).toBeGreaterThan(0);
      await page.getByTestId('filter-invalid').check();
      await expect.poll(() => page.getByTestId('episode').count(), { timeout: 10_000 }).toBeGreaterThan(0);
      await page.getByTestId('episode').first().click();
      await expect.poll(() => page.getByTestId('step-position').textContent()).toMatch(/^Step 1 of \d+$/);
      const steps = Number(/of (\d+)/.exec((await page.getByTestId('step-position').textContent())!)![1]);
      let found = false;
      for (let s = 0; s < steps && !found; s++) {
        if (s > 0) {
          await page.keyboard.press('ArrowRight');
          await expect.poll(() => page.getByTestId('step-position').textContent()).toBe(`Step ${s + 1} of ${steps}`);
        }
        found = (await page.getByTestId('step-valid').textContent())!.startsWith(
          "no — the experience model's answer was unusable",
        );
      }
      expect(found).toBe(true);
      const valid = (await page.getByTestId('step-valid').textContent())!;
      await expect
        .poll(() => page.getByTestId('reasoning').textContent())
        .toMatch(/^No reasoning: the answer was unusable/);
      const rejections = await page.getByTestId('answer-rejected').allTextContents();
      const raws = await page.getByTestId('dream-answer').getByTestId('answer-raw').allTextContents();
      console.log(
        `[inspect] ${valid}; calls: ${rejections.join(' | ')}; raw: ${raws.map((r) => r.slice(0, 80)).join(' | ')}`,
      );
      const unusable = await page.getByTestId('answer-unusable').allTextContents();
      expect(raws.length).toBe(2); // the answer and its one retry
      expect(rejections.length + unusable.length).toBe(2);
      expect(rejections[0]).toMatch(
        /^Rejected: (length cut-off at 64 tokens|parse error|schema error|inconsistent|the engine ended).* — asked again$/,
      );
      // The last call's reason is the step's: the Valid field says the same.
      const last =
        rejections.length === 2
          ? rejections[1].replace(/^Rejected: /, '')
          : unusable[0].replace(/^Parsed, but the step is unusable: /, '');
      expect(valid).toContain(last);
      await page.getByTestId('dream-answer').evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: `${SHOTS}/inspect-invalid-answer.png` });
      expect(errors).toEqual([]);
      await page.close();
    },
    420_000,
  );
});
