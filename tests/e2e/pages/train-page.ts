/**
 * The Train page of the built app as the e2e tests read and drive it: its readouts (found by test id,
 * the run's state in data-state), the page navigation, and a whole run from a #/train?… link.
 */
import { expect } from 'vitest';
import type { Page } from 'playwright';

type Hook = { __dreamgym?: { train: { status: { runId: string | null } } } };

/** The run's state (data-state of the status line: idle, running, finished, error, stopped…). */
export const runState = (page: Page) => page.getByTestId('train-status').getAttribute('data-state');
export const runStatus = (page: Page) => page.getByTestId('train-status').textContent();
export const iteration = async (page: Page) => Number(await page.getByTestId('iteration').textContent());
/** How many points the chart of `metric` plots. */
export const points = async (page: Page, metric: string) =>
  Number(await page.locator(`figure[data-metric="${metric}"]`).getAttribute('data-points'));
/** The id of the run the Train page shows (the page's test hook), null before the first. */
export const currentRunId = (page: Page) =>
  page.evaluate(() => (window as unknown as Hook).__dreamgym?.train.status.runId ?? null);
/** The header's link to a page, by its name. */
export const navLink = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true });

/**
 * Opens a #/train?… link on the app at `baseUrl` (same document) and presses Start; waits until the
 * run is over and expects it to end as `until` says (the status and the page's `errors` shown if
 * not); returns the run's id.
 */
export async function trainRun(
  page: Page,
  baseUrl: string,
  query: string,
  errors: readonly string[],
  until: RegExp = /^finished$/,
): Promise<string> {
  const before = await currentRunId(page);
  await page.goto(`${baseUrl}/#/train?${query}`);
  await expect.poll(() => page.getByLabel('Seed').inputValue()).toBe(new URLSearchParams(query).get('seed'));
  await page.getByRole('button', { name: 'Start' }).click();
  await expect.poll(() => currentRunId(page)).not.toBe(before);
  await expect.poll(() => runState(page), { timeout: 150_000 }).toMatch(/^(finished|error|stopped)$/);
  expect(`${await runState(page)}: ${await runStatus(page)} ${errors.join(' | ')}`).toMatch(
    new RegExp(`^${until.source.replace(/^\^|\$$/g, '')}: `),
  );
  return (await currentRunId(page))!;
}

/** Presses Stop and waits until the run says it stopped. */
export async function stopRun(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect.poll(() => runState(page)).toBe('stopped');
}
