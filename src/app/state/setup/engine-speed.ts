/**
 * What this browser measured of each dream engine (plain logic, unit-tested in Node): seconds per
 * answer, tokens per transition and the transition cache's hit rate — from Setup's "Try one step"
 * and from the live progress of runs — kept in localStorage by engine spec, so the Train page's
 * cost estimate goes by the engine's measured speed instead of an assumed one.
 */
import type { EngineSpeed, EstimateInputs } from '../../../core/train/estimate';
import type { LiveProgress } from '../../../core/train/progress';
import type { StorageLike } from './engine';

export const SPEED_KEY = 'dreamgym.engine.speed';

export interface MeasuredSpeed {
  /** Seconds per answer the engine really gave (cache hits left out). */
  secondsPerCall: number;
  /**
   * 'latency': one call timed alone (Try one step) — an engine serving several at once goes
   * faster; 'throughput': answers per second of a run, its parallel calls included.
   */
  kind: 'latency' | 'throughput';
  tokensPerTransition?: number;
  cacheHitRate?: number;
  /** How it was measured, in words ('Try one step', 'the run of 12 Jun'). */
  how: string;
  at: number;
}

type SpeedTable = Record<string, MeasuredSpeed>;

function load(storage: StorageLike | null): SpeedTable {
  try {
    const parsed = JSON.parse(storage?.getItem(SPEED_KEY) ?? '{}');
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as SpeedTable) : {};
  } catch {
    return {};
  }
}

function valid(m: MeasuredSpeed | undefined): m is MeasuredSpeed {
  return !!m && typeof m.secondsPerCall === 'number' && Number.isFinite(m.secondsPerCall) && m.secondsPerCall > 0;
}

export function measuredSpeed(
  spec: string,
  storage: StorageLike | null = globalThis.localStorage ?? null,
): MeasuredSpeed | null {
  const m = load(storage)[spec];
  return valid(m) ? m : null;
}

/** Keeps a measurement of `spec` (the figures given replace the old ones; the others are kept). */
export function recordSpeed(
  spec: string,
  m: MeasuredSpeed,
  storage: StorageLike | null = globalThis.localStorage ?? null,
): void {
  if (!valid(m)) return;
  const table = load(storage);
  table[spec] = { ...table[spec], ...m };
  try {
    storage?.setItem(SPEED_KEY, JSON.stringify(table));
  } catch {
    /* storage blocked or full: no memory of it */
  }
}

/** A run's live progress as a measurement (null until the engine has answered something). */
export function speedFromLive(live: LiveProgress, how: string, at: number): MeasuredSpeed | null {
  const t = live.total;
  const calls = t.predictions - t.cacheHits;
  if (live.phase !== 'dream' || live.callsPerSecond <= 0 || calls <= 0) return null;
  return {
    secondsPerCall: 1 / live.callsPerSecond,
    kind: 'throughput',
    tokensPerTransition: Math.round(t.tokens / calls),
    cacheHitRate: t.cacheHits / t.predictions,
    how,
    at,
  };
}

/**
 * The estimate's inputs from a measurement. `parallel`: calls the engine serves at once (openai:
 * llmConcurrency) — applied to a latency; a run's throughput already has them in it.
 */
export function estimateInputs(m: MeasuredSpeed | null, parallel = 1): EstimateInputs {
  if (!m) return {};
  const perCall = `${m.secondsPerCall.toFixed(m.secondsPerCall < 1 ? 2 : 1)} s per answer`;
  const speed: EngineSpeed =
    m.kind === 'throughput'
      ? {
          secondsPerTransition: m.secondsPerCall,
          parallel: 1,
          measured: true,
          source: `measured: ${m.how}, ${perCall} with its calls in flight`,
        }
      : {
          secondsPerTransition: m.secondsPerCall,
          parallel,
          measured: true,
          source: `measured: ${m.how}, ${perCall} alone${parallel > 1 ? `; ${parallel} at once if the server batches them` : ''}`,
        };
  return {
    speed,
    ...(m.tokensPerTransition ? { tokensPerTransition: m.tokensPerTransition } : {}),
    ...(m.cacheHitRate !== undefined ? { cacheHitRate: m.cacheHitRate } : {}),
  };
}
