/**
 * The Experience model page's estimate before a training starts (plain logic, unit-tested):
 *
 *   time ≈ epochs × (training tokens an epoch) / (training tokens per second)
 *
 * The tokens an epoch come from the chosen data: the buffer's real transitions of the env (less
 * the validation tasks' share, or the episodes asked for) × the tokens a pair has at the chosen
 * k and H, counted on the shipped datasets with the shipped recipe (below). The speed is the one
 * this browser measured on its last training of the same size and backend (kept in
 * localStorage); before there is one, the
 * speed check's score (machine-speed.ts, a second before the estimate) times the tokens a round
 * of its work is worth for the size, measured once in the page (PAGE_WORK). Without a score
 * either, the typical range of a page worker's wasm thread, said to be an assumption. Once a
 * training runs, the page shows its own measured time left instead (core's time-left.ts,
 * expmodel-view.ts progressLine). Both are held to 1.5× of the actual time by
 * tests/e2e/app-expmodel-estimate.e2e.test.ts.
 *
 * Why it was 2–5× off: the size's label promised "up to ~15 min on 2 cores", the CLI's figure in
 * Node for an older recipe (the current one takes 16.6 min there: docs/results/learned-model.md,
 * "Training time"), not the page's: the page trains on one wasm thread in a worker that shares the machine with the
 * browser, and its own time left (itself noisy: core's time-left.ts says why) read 26 min to
 * 1 h 18 min. The labels now promise no time; this estimate says what it assumes.
 */
import type { BackendPreference, ExpModelSettings, ModelSize } from './expmodel-settings';
import { roughDuration, runsOn } from './expmodel-view';

/**
 * Training tokens (context + answer) per real transition trained on, at k = 0, 4 and 8 retrieved
 * examples with H = 4 past actions, and what each past action adds; transitions per training
 * episode. Counted with prepareData on the shipped datasets (240 episodes each, the shipped
 * recipe's format): webshop 1,501 training transitions of 211 episodes (603,191 tokens at k = 4,
 * 309,879 at k = 0, 838,803 at k = 8, 574,647 at H = 0); household 4,104 of 221 (1,004,774;
 * 484,747; 1,522,693; 935,335); webarena 1,045 of 217 (446,014; 212,336; 629,598; 428,401).
 */
export interface TokenCount {
  byK: [number, number, number];
  perHistoryStep: number;
  perEpisode: number;
}
export const TOKENS_PER_TRANSITION: Record<string, TokenCount> = {
  'webshop-lite-v0': { byK: [206.4, 401.9, 558.8], perHistoryStep: 4.75, perEpisode: 7.11 },
  'household-v0': { byK: [118.1, 244.8, 371.0], perHistoryStep: 4.23, perEpisode: 18.57 },
  'webarena-lite-v0': { byK: [203.2, 426.8, 602.5], perHistoryStep: 4.21, perEpisode: 4.82 },
};

/** The share of real episodes trained on (learnedTrainOptions' validationShare is 0.1, split by task). */
export const TRAIN_SHARE = 0.9;

/**
 * Typical training tokens per second of one wasm thread in a page worker (an epoch's training
 * tokens over its seconds, validation included), an assumption until this browser measures its
 * own. standard: the range of the page's measured time left for 10 webshop epochs on a 2-core
 * machine (26 min to 1 h 18 min for 6.03 M tokens; the CLI in Node measured 5,385–6,509).
 * small and tiny: not measured in the page; standard's scaled by their fewer multiply-adds a
 * token, less than in proportion, since wasm pays a fixed cost per kernel call whatever the width.
 */
export const TYPICAL_PAGE_SPEED: Record<ModelSize, { low: number; high: number }> = {
  standard: { low: 1_300, high: 3_900 },
  small: { low: 2_500, high: 8_000 },
  tiny: { low: 4_000, high: 16_000 },
};

/**
 * A training's work in the page, in the speed check's rounds (machine-speed.ts): a start (the
 * worker, tfjs, the data's preparation, up to the first batch) and the rounds a training token is
 * worth at each size (validation and checkpoints included), so that seconds ≈ work / score.
 * Measured in the page by tests/e2e/app-expmodel-estimate.e2e.test.ts (it logs seconds × score):
 * docs/results/start-here.md, "Estimates on the Train page and the Experience model tab".
 */
export const PAGE_WORK: { start: number; perToken: Record<ModelSize, number> } = {
  start: 1.5e6,
  perToken: { standard: 64, small: 24, tiny: 15 },
};

/** The CLI's measured speed for the standard size (Node, wasm, one thread; docs/results/learned-model.md). */
export const CLI_STANDARD_SPEED = 6_046;

/** A training speed this browser measured: the last epoch of a training of this size on this backend. */
export interface MeasuredSpeed {
  tokensPerSecond: number;
  env: string;
  measuredAt: number;
}
export type MeasuredSpeeds = Record<string, MeasuredSpeed>;

export const SPEED_STORAGE_KEY = 'dreamgym-expmodel-speed';

function speedKey(size: ModelSize, backend: string): string {
  return `${size}|${backend}`;
}

/** The speeds kept in `storage` (none when it is missing or holds something else). */
export function readMeasuredSpeeds(storage: Pick<Storage, 'getItem'> | undefined): MeasuredSpeeds {
  try {
    const value = JSON.parse(storage?.getItem(SPEED_STORAGE_KEY) ?? '{}') as unknown;
    if (!value || typeof value !== 'object') return {};
    const out: MeasuredSpeeds = {};
    for (const [key, v] of Object.entries(value as Record<string, Partial<MeasuredSpeed>>)) {
      const ok =
        typeof v?.tokensPerSecond === 'number' &&
        v.tokensPerSecond > 0 &&
        typeof v.env === 'string' &&
        typeof v.measuredAt === 'number';
      if (ok) out[key] = { tokensPerSecond: v.tokensPerSecond!, env: v.env!, measuredAt: v.measuredAt! };
    }
    return out;
  } catch {
    return {};
  }
}

/** Keeps an epoch's measured speed (the newest wins); returns the speeds now kept. */
export function recordMeasuredSpeed(
  storage: Pick<Storage, 'getItem' | 'setItem'> | undefined,
  speeds: MeasuredSpeeds,
  size: ModelSize,
  backend: string,
  speed: MeasuredSpeed,
): MeasuredSpeeds {
  if (!(speed.tokensPerSecond > 0)) return speeds;
  const next = { ...speeds, [speedKey(size, backend)]: speed };
  try {
    storage?.setItem(SPEED_STORAGE_KEY, JSON.stringify(next));
  } catch {
    // Storage full or refused: the speed is kept for this session only.
  }
  return next;
}

export type MeasuredOn = MeasuredSpeed & { backend: string };

/** The measured speed these settings would train at: their backend's (under auto, the newer of wasm's and webgpu's). */
export function measuredFor(speeds: MeasuredSpeeds, size: ModelSize, backend: BackendPreference): MeasuredOn | null {
  const backends = backend === 'auto' ? ['wasm', 'webgpu'] : [backend];
  let best: MeasuredOn | null = null;
  for (const b of backends) {
    const m = speeds[speedKey(size, b)];
    if (m && (!best || m.measuredAt > best.measuredAt)) best = { ...m, backend: b };
  }
  return best;
}

/** Training tokens of an epoch with these settings on `realTransitions` of the env; null for an env not counted. */
export function epochTokens(s: ExpModelSettings, realTransitions: number): EpochWork | null {
  const t = TOKENS_PER_TRANSITION[s.env];
  if (!t || realTransitions <= 0) return null;
  const all = realTransitions * TRAIN_SHARE;
  const transitions = s.episodes > 0 ? Math.min(all, s.episodes * t.perEpisode) : all;
  // Piecewise linear in k through the counted points (beyond 8: the last slope).
  const [k0, k4, k8] = t.byK;
  const atK = s.k <= 4 ? k0 + ((k4 - k0) * s.k) / 4 : k4 + ((k8 - k4) * (s.k - 4)) / 4;
  const perTransition = atK + (s.history - 4) * t.perHistoryStep;
  return { tokens: Math.round(transitions * Math.max(1, perTransition)), transitions: Math.round(transitions) };
}

export interface EpochWork {
  tokens: number;
  transitions: number;
}

export interface PreRunEstimate {
  /** Seconds for all epochs: a range (equal ends when measured here or from the speed check). */
  low: number;
  high: number;
  /** What it rests on: this browser's last training, the speed check alone, or an assumed typical speed. */
  basis: 'last-training' | 'speed-check' | 'typical';
  epochTokens: number;
  measured: MeasuredOn | null;
  text: string;
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** The estimate before training, with where every figure comes from; null when it cannot be made. */
export function preRunEstimate(
  s: ExpModelSettings,
  realTransitions: number,
  speeds: MeasuredSpeeds,
  score: number | null = null,
): PreRunEstimate | null {
  const work = epochTokens(s, realTransitions);
  if (!work) return null;
  const tokens = work.tokens * s.epochs;
  const data =
    `${s.epochs} epoch${s.epochs === 1 ? '' : 's'} at most (early stopping may end sooner) of ` +
    `≈ ${count(work.tokens)} tokens each (≈ ${count(work.transitions)} real transitions trained on)`;
  const measured = measuredFor(speeds, s.size, s.backend);
  const base = { epochTokens: work.tokens, measured };
  if (measured) {
    // The last training's speed as it was: scaled by the speed check's change since, it was further off (the check
    // moved 1.6× between two trainings of the same time; docs/results/start-here.md).
    const seconds = (score !== null ? PAGE_WORK.start / score : 0) + tokens / measured.tokensPerSecond;
    const when = new Date(measured.measuredAt).toISOString().slice(0, 10);
    const text =
      `Estimate: about ${roughDuration(seconds)} for ${data}, at ${count(measured.tokensPerSecond)} ` +
      `tokens/s — from the speed this browser measured training the ${s.size} size on ${runsOn(measured.backend)} ` +
      `(${measured.env}, ${when}).`;
    return { ...base, low: seconds, high: seconds, basis: 'last-training', text };
  }
  if (score !== null) {
    const seconds = (PAGE_WORK.start + tokens * PAGE_WORK.perToken[s.size]) / score;
    const gpu = s.backend === 'wasm' ? '' : ' WebGPU, where it is used, goes at its own speed.';
    const text =
      `Estimate: about ${roughDuration(seconds)} for ${data}, at ≈ ${count(score / PAGE_WORK.perToken[s.size])} ` +
      `tokens/s — from this machine's speed, checked just now for a second, and the ${s.size} size's training ` +
      `work on one wasm thread in a page worker, measured once.${gpu} Once training runs, the time left is measured here.`;
    return { ...base, low: seconds, high: seconds, basis: 'speed-check', text };
  }
  const typical = TYPICAL_PAGE_SPEED[s.size];
  const low = tokens / typical.high,
    high = tokens / typical.low;
  const gpu = s.backend === 'wasm' ? '' : ' WebGPU, where it is used, goes at its own speed, measured once it trains.';
  const text =
    `Estimate: ${roughDuration(low)} to ${roughDuration(high)} for ${data}, at ` +
    `${count(typical.low)}–${count(typical.high)} tokens/s — an assumed typical speed of the ${s.size} size on ` +
    'one wasm thread in a page worker, not yet measured in this browser (the CLI in Node trains the standard size at ' +
    `≈ ${count(CLI_STANDARD_SPEED)} tokens/s).${gpu} Once training runs, the time left is measured here.`;
  return { ...base, low, high, basis: 'typical', text };
}

/** The estimate before the click keeps this weight, as a share of the training, against the measured time left. */
const PRIOR_SHARE = 0.2;

/**
 * The time left while training: core's measured time left (time-left.ts) weighed with the estimate
 * before the click by the share of the training done. Core's alone read 2× the time left in the first
 * seconds (its first measured batches still carry the start-up: docs/results/start-here.md); the
 * estimate before the click alone would ignore what the training shows of this machine.
 */
export function blendedSecondsLeft(
  measuredLeft: number | null,
  expected: number | null,
  fraction: number,
): number | null {
  if (measuredLeft === null || expected === null) return measuredLeft;
  const done = Math.max(0, Math.min(1, fraction));
  return (PRIOR_SHARE * expected * (1 - done) + done * measuredLeft) / (PRIOR_SHARE + done);
}
