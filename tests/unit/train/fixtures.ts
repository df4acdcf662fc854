/** What the trainer's tests share: the wasm backend, a small webshop-easy config, a run to its end. */
import { beforeAll } from 'vitest';
import { initBackend } from '../../../src/core/tfjs/backend';
import { getPreset, validateConfig, type TrainConfig } from '../../../src/core/train/config';
import type { Trainer } from '../../../src/core/train/loop';

/** The file's tests run on tfjs's wasm backend (set once, before them). */
export function useWasmBackend(): void {
  beforeAll(async () => {
    await initBackend('wasm');
  });
}

/** webshop-easy made small and fast: 3 iterations of 2 tasks × 4 rollouts, 4 evaluation episodes at the end. */
export function smallWebshop(overrides: Partial<TrainConfig> = {}): TrainConfig {
  return validateConfig({
    ...getPreset('webshop-easy'),
    iterations: 3,
    tasksPerIteration: 2,
    groupSize: 4,
    evalInterval: 0,
    evalEpisodes: 4,
    finalEvalEpisodes: 4,
    ...overrides,
  });
}

/** Runs the trainer to its end: each iteration's record as a JSON line. */
export async function runAll(trainer: Trainer): Promise<string[]> {
  const lines: string[] = [];
  while (!trainer.finished) lines.push(JSON.stringify(await trainer.runIteration()));
  return lines;
}
