/**
 * WebLLM's load progress (webllm.ts): web-llm's InitProgressReport as a LoadProgress with its phase, the bytes so
 * far and a time-left estimate.
 */
import type { InitProgressReport } from '@mlc-ai/web-llm';
import type { LoadProgress } from './types';

export type WebLlmLoadPhase = 'start' | 'fetch' | 'cache' | 'shaders' | 'done' | 'other';

export interface WebLlmLoadProgress extends LoadProgress {
  /** web-llm reports progress per phase: downloading (fetch), reading from cache, compiling shaders. */
  phase: WebLlmLoadPhase;
  /** Seconds left in this phase at its rate so far (undefined until there is a rate). */
  etaSeconds?: number;
}

/** web-llm's InitProgressReport → LoadProgress with elapsed time, bytes and a time-left estimate. */
export class LoadProgressTracker {
  readonly #now: () => number;
  readonly #start: number;
  #phase: WebLlmLoadPhase | undefined;
  #phaseStart = 0;
  #phaseStartProgress = 0;

  /** @param now clock in ms (default performance.now) */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#start = now();
  }

  update(report: Pick<InitProgressReport, 'progress' | 'text'> & { timeElapsed?: number }): WebLlmLoadProgress {
    const t = this.#now();
    const progress = clamp01(report.progress);
    const phase = phaseOf(report.text);
    if (phase !== this.#phase) {
      this.#phase = phase;
      this.#phaseStart = t;
      this.#phaseStartProgress = progress;
    }
    const out: WebLlmLoadProgress = { progress, text: report.text, elapsed: (t - this.#start) / 1000, phase };
    if (phase === 'done' || progress >= 1) {
      out.etaSeconds = 0;
    } else {
      const gained = progress - this.#phaseStartProgress;
      const spent = (t - this.#phaseStart) / 1000;
      if (gained > 0.005 && spent > 0) out.etaSeconds = (spent / gained) * (1 - progress);
    }
    const mb = /(\d+(?:\.\d+)?)\s*MB (?:fetched|loaded)/.exec(report.text);
    if (mb) {
      out.loadedBytes = Math.round(Number(mb[1]) * 2 ** 20);
      if (progress > 0) out.totalBytes = Math.round(out.loadedBytes / progress);
    }
    return out;
  }
}

function phaseOf(text: string): WebLlmLoadPhase {
  if (/^Start to fetch/i.test(text)) return 'start';
  if (/^Fetching param cache/i.test(text)) return 'fetch';
  if (/^Loading model from cache/i.test(text)) return 'cache';
  if (/^Loading GPU shader/i.test(text)) return 'shaders';
  if (/^Finish loading/i.test(text)) return 'done';
  return 'other';
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}
