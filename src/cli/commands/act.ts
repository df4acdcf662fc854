/**
 * `dreamgym act --run RUN`: a trained agent as a program an application calls. It reads JSON lines
 * from stdin, one state each:
 *
 *   {"instruction": "…", "observation": "…", "admissible": ["…", …], "previous_actions": ["…"], "step": 0}
 *
 * (`previous_actions` and `step` optional: the actions already taken in the episode, and its
 * index), and writes one JSON line each: the action chosen among `admissible`, its probability
 * under the policy, and the most probable candidates. A line it cannot use gets
 * `{"line": N, "error": "…"}` and the next line is read: one bad state never stops the agent.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { Rng } from '../../core/rng';
import type { PolicyState } from '../../core/policy/features';
import { type CommandSpec, type ParsedArgs } from '../args';
import { safeJson } from '../output';
import { loadRunAgent } from './train';

export const actCommand: CommandSpec = {
  name: 'act',
  summary: "a trained agent's action for each state read from stdin (JSON lines in, JSON lines out)",
  usage: 'dreamgym act --run RUN [--sample --seed S] [--top N] < states.jsonl',
  options: {
    run: { type: 'string', description: 'the run folder whose checkpoint acts (train --out, or a domain run)' },
    sample: { type: 'boolean', description: 'sample the action from the policy (default: its most probable one)' },
    seed: { type: 'integer', description: 'seed of the sampling stream (with --sample)', default: 1, min: 0 },
    top: { type: 'integer', description: 'most probable candidates listed with each answer', default: 3, min: 0 },
  },
};

/** What one line asks: a state of the application, in the policy's terms. */
export function stateOfLine(text: string, stepLimit: number): PolicyState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON (${(error as Error).message})`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('a state is a JSON object: {"instruction", "observation", "admissible"}');
  const record = value as Record<string, unknown>;
  const string = (name: string): string => {
    if (typeof record[name] !== 'string') throw new Error(`'${name}' must be a string`);
    return record[name] as string;
  };
  const strings = (name: string): string[] | undefined => {
    const list = record[name];
    if (list === undefined) return undefined;
    if (!Array.isArray(list) || !list.every((a) => typeof a === 'string'))
      throw new Error(`'${name}' must be a list of strings`);
    return list as string[];
  };
  const admissible = strings('admissible');
  if (!admissible || admissible.length === 0)
    throw new Error(
      "'admissible' lists no action: the agent chooses among the actions the application offers in this state. " +
        'List them (inferring them from recorded episodes is not built yet).',
    );
  const previousActions = strings('previous_actions') ?? [];
  const step = record.step === undefined ? previousActions.length : record.step;
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 0)
    throw new Error("'step' must be a whole number ≥ 0");
  return {
    instruction: string('instruction'),
    observation: string('observation'),
    admissible,
    step,
    maxSteps: stepLimit,
    previousActions,
  };
}

export async function runAct(
  args: ParsedArgs,
  io: { input: Readable; output: Writable } = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const o = args.options as { run?: string; sample?: boolean; seed: number; top: number };
  if (!o.run) throw new Error('act needs --run RUN: the folder of a trained run (train --out).');
  const agent = await loadRunAgent(o.run);
  const rng = Rng.fromSeed(o.seed, 'act');
  let bad = 0;
  let line = 0;
  try {
    for await (const text of createInterface({ input: io.input, crlfDelay: Infinity })) {
      line++;
      if (!text.trim()) continue;
      const reply = await answer(agent.trainer, text, line, rng, o);
      if ('error' in reply) bad++;
      io.output.write(safeJson(reply) + '\n');
    }
  } finally {
    await agent.close();
  }
  return bad > 0 ? 1 : 0;
}

async function answer(
  trainer: Awaited<ReturnType<typeof loadRunAgent>>['trainer'],
  text: string,
  line: number,
  rng: Rng,
  o: { sample?: boolean; top: number },
): Promise<Record<string, unknown>> {
  let state: PolicyState;
  try {
    state = stateOfLine(text, trainer.stepLimit);
  } catch (error) {
    return { line, error: (error as Error).message };
  }
  const acted = await trainer.policy.act([state], rng, { greedy: !o.sample });
  const probs = acted.probs[0];
  const top = state.admissible
    .map((action, i) => ({ action, probability: round(probs[i]) }))
    .sort((a, b) => b.probability - a.probability)
    .slice(0, o.top);
  return { line, action: acted.actions[0], probability: round(probs[acted.actionIndices[0]]), top };
}

const round = (p: number) => Math.round(p * 1e6) / 1e6;
