/**
 * checkEnv(): the contract test every environment must pass (ours, DreamEnv, imported domains).
 * Like Gymnasium's `check_env`, it plays the env and reports every broken rule at once, each
 * with what was expected, so a new environment can be fixed in one pass.
 */
import { Rng } from '../rng';
import type { Observation, StepResult } from '../types';
import { TimeLimit, Wrapper, type Env } from './env';

export interface CheckEnvOptions {
  /** Seeds for the episodes that are played (default 0..4). */
  seeds?: number[];
  /** The step limit the env should truncate at; read from a TimeLimit wrapper when omitted. */
  stepLimit?: number;
  /** An action no environment should accept. */
  inadmissibleAction?: string;
}

export interface CheckEnvReport {
  ok: boolean;
  failures: string[];
  episodes: number;
  steps: number;
}

function findStepLimit(env: Env): number | undefined {
  let e: Env = env;
  for (;;) {
    if (e instanceof TimeLimit) return e.maxSteps;
    if (e instanceof Wrapper) e = e.env;
    else return undefined;
  }
}

function sameObservation(a: Observation, b: Observation): boolean {
  return (
    a.text === b.text &&
    a.task.id === b.task.id &&
    a.admissible.length === b.admissible.length &&
    a.admissible.every((x, i) => x === b.admissible[i])
  );
}

/** Plays the env and returns every contract violation found (empty `failures` = ok). */
export async function checkEnv(env: Env, options: CheckEnvOptions = {}): Promise<CheckEnvReport> {
  const seeds = options.seeds ?? [0, 1, 2, 3, 4];
  const stepLimit = options.stepLimit ?? findStepLimit(env);
  const inadmissible = options.inadmissibleAction ?? 'click[__no such action__]';
  const failures: string[] = [];
  const fail = (message: string) => {
    if (!failures.includes(message)) failures.push(message);
  };
  let steps = 0;
  let episodes = 0;

  const checkObservation = (obs: Observation, where: string, ended: boolean) => {
    if (typeof obs.text !== 'string' || obs.text.length === 0)
      fail(`${where}: observation text must be a non-empty string`);
    if (!Array.isArray(obs.admissible)) {
      fail(`${where}: admissible must be an array`);
      return;
    }
    if (!ended && obs.admissible.length === 0)
      fail(`${where}: admissible actions must be non-empty until the episode ends`);
    for (const a of obs.admissible) {
      if (typeof a !== 'string' || a.trim().length === 0)
        fail(`${where}: every admissible action must be a non-empty string, got ${JSON.stringify(a)}`);
    }
    if (!obs.task || typeof obs.task.id !== 'string' || obs.task.env !== env.id)
      fail(`${where}: observation.task must be the task being played (task.env === '${env.id}')`);
  };
  const checkStep = (r: StepResult, where: string) => {
    if (!Number.isFinite(r.reward)) fail(`${where}: reward must be finite, got ${r.reward}`);
    if (r.terminated && r.truncated)
      fail(`${where}: terminated and truncated are exclusive (terminated = task ended, truncated = step limit)`);
    if (
      typeof r.info?.valid !== 'boolean' ||
      typeof r.info?.success !== 'boolean' ||
      !Number.isInteger(r.info?.steps)
    ) {
      fail(`${where}: info must hold valid (boolean), success (boolean) and steps (integer)`);
    }
    checkObservation(r, where, r.terminated || r.truncated);
  };

  for (const seed of seeds) {
    // Same seed → same first observation.
    const first = await env.reset({ seed });
    const again = await env.reset({ seed });
    checkObservation(first, `reset(seed ${seed})`, false);
    if (!sameObservation(first, again))
      fail(`reset(seed ${seed}) twice gave different observations: reset must be deterministic in its seed`);

    // An inadmissible action is a no-op with valid: false.
    if (!first.admissible.includes(inadmissible)) {
      const noop = await env.step(inadmissible);
      steps++;
      checkStep(noop, `step('${inadmissible}') after reset(seed ${seed})`);
      if (noop.info.valid !== false) fail(`an inadmissible action must give info.valid === false (seed ${seed})`);
      if (noop.reward !== 0) fail(`an inadmissible action must give reward 0 (seed ${seed})`);
      if (noop.terminated) fail(`an inadmissible action must not terminate the episode (seed ${seed})`);
      if (noop.text !== first.text || noop.admissible.join('\n') !== first.admissible.join('\n')) {
        fail(`an inadmissible action must leave the observation and admissible actions unchanged (seed ${seed})`);
      }
    }

    // Random admissible rollouts, twice: the same seed and actions must replay identically.
    const transcripts: string[] = [];
    for (let replay = 0; replay < 2; replay++) {
      const rng = Rng.fromSeed(seed, 'check-env');
      let obs: Observation = await env.reset({ seed });
      const lines: string[] = [obs.text];
      let t = 0;
      for (;;) {
        const action = rng.pick(obs.admissible);
        const r = await env.step(action);
        steps++;
        t++;
        checkStep(r, `seed ${seed} step ${t} ('${action}')`);
        if (r.info.valid !== true) fail(`an admissible action must be valid (seed ${seed}, step ${t}, '${action}')`);
        lines.push(`${action}|${r.reward}|${r.terminated}|${r.truncated}|${r.text}`);
        obs = r;
        if (r.terminated || r.truncated) break;
        if (stepLimit !== undefined && t > stepLimit) {
          fail(`episode ran past the step limit ${stepLimit} without truncation (seed ${seed})`);
          break;
        }
        if (t > 10_000) {
          fail(`episode did not end in 10,000 steps (seed ${seed}); wrap the env in TimeLimit`);
          break;
        }
      }
      transcripts.push(lines.join('\n'));
      episodes++;
    }
    if (transcripts[0] !== transcripts[1])
      fail(`replaying the same seed and actions gave a different episode (seed ${seed}): step must be deterministic`);

    // The step limit truncates: only no-op actions until the limit.
    if (stepLimit !== undefined) {
      await env.reset({ seed });
      let last: StepResult | null = null;
      for (let t = 1; t <= stepLimit; t++) {
        last = await env.step(inadmissible);
        steps++;
        if ((last.truncated || last.terminated) && t < stepLimit) {
          fail(`no-op episode ended at step ${t}, before the step limit ${stepLimit} (seed ${seed})`);
          break;
        }
      }
      episodes++;
      if (last && !last.truncated) fail(`step ${stepLimit} of ${stepLimit} must set truncated: true (seed ${seed})`);
      if (last && last.truncated && last.admissible.length !== 0)
        fail(`a truncated observation must list no admissible actions (seed ${seed})`);
    }
  }
  return { ok: failures.length === 0, failures, episodes, steps };
}
