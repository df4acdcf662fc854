/**
 * `dreamgym act --run RUN`: a trained agent as a program an application calls. It reads JSON lines
 * from stdin, one state each:
 *
 *   {"instruction": "…", "observation": "…", "admissible": ["…", …], "previous_actions": ["…"], "step": 0}
 *
 * (`previous_actions` and `step` optional: the actions already taken in the episode, and its
 * index), and writes one JSON line each: the action chosen among the candidates, its probability
 * under the policy, and the most probable candidates. A line it cannot use gets
 * `{"line": N, "error": "…"}` and the next line is read: one bad state never stops the agent.
 *
 * Candidates where the application offers none: a line without `admissible` (or with an empty
 * one) from the agent of an imported domain (`domain train`, whose run names its domain in
 * domain-agent.json) gets candidates inferred as `domain import` infers them for steps that list
 * none (src/core/data/candidates.ts): the actions taken in the most similar states of the
 * domain's TRAINING episodes, by the words of the observation, the previous action and the
 * instruction, at most 32. The answer says so (`candidates: "inferred"`, with the list), since an
 * inferred candidate may not exist in the application's state. A run of a registered env has no
 * such data: its lines must list `admissible`.
 */
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { candidateInference } from '../../core/data/candidates';
import type { CandidatePolicy } from '../../core/policy/policy';
import { restoreDomainAgent } from '../../core/domain/trainer';
import { FolderCheckpointStore } from '../../node/checkpoint-folder';
import { loadDomainFolder } from '../../node/domain-folder';
import { Rng } from '../../core/rng';
import type { PolicyState } from '../../core/policy/features';
import { type CommandSpec, type ParsedArgs } from '../args';
import { safeJson } from '../output';
import { loadRunAgent } from './run-folder';
import { readDomainAgent, type DomainAgentRecord } from './domain';

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

/** Candidates for a state that lists none (an imported domain's inference), or undefined where there are none. */
export type CandidateInference = (state: {
  instruction: string;
  observation: string;
  previousActions: readonly string[];
}) => string[] | undefined;

function noCandidates(): Error {
  return new Error(
    "'admissible' lists no action: the agent chooses among the actions the application offers in this state. " +
      'List them, or act with the run of an imported domain (domain train), which infers candidates from its episodes.',
  );
}

/** What one line asks: a state of the application, in the policy's terms (`infer`: candidates where it lists none). */
export function stateOfLine(text: string, stepLimit: number, infer?: CandidateInference): PolicyState {
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
  const listed = strings('admissible') ?? [];
  if (listed.length === 0 && !infer) throw noCandidates();
  const instruction = string('instruction');
  const observation = string('observation');
  const previousActions = strings('previous_actions') ?? [];
  const step = record.step === undefined ? previousActions.length : record.step;
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 0)
    throw new Error("'step' must be a whole number ≥ 0");
  const admissible = listed.length > 0 ? listed : (infer?.({ instruction, observation, previousActions }) ?? []);
  if (admissible.length === 0) throw noCandidates();
  return {
    instruction,
    observation,
    admissible,
    step,
    maxSteps: stepLimit,
    previousActions,
  };
}

/** The agent of a run folder: its policy and step limit, and candidate inference where its domain has data. */
interface RunAgent {
  policy: CandidatePolicy;
  stepLimit: number;
  infer?: CandidateInference;
  close(): Promise<void>;
}

/** A domain run's agent: its checkpoint's policy, and candidates inferred from its domain's training episodes. */
async function loadDomainRunAgent(run: string, record: DomainAgentRecord): Promise<RunAgent> {
  const state = await new FolderCheckpointStore(join(run, 'checkpoint')).load();
  if (!state)
    throw new Error(`No checkpoint in ${join(run, 'checkpoint')}: run domain train again, or check the folder.`);
  let domain;
  try {
    domain = loadDomainFolder(record.dir, record.domain);
  } catch (error) {
    throw new Error(
      `The run ${run} belongs to domain '${record.domain}' in ${record.dir}, which cannot be read ` +
        `(${(error as Error).message}): its candidates come from that domain's episodes. Import it there again.`,
      { cause: error },
    );
  }
  const trainer = await restoreDomainAgent(domain, state, record.stepLimit);
  const candidates = candidateInference(domain.train);
  return {
    policy: trainer.policy,
    stepLimit: record.stepLimit,
    infer: (s) => candidates({ ...s, previousAction: s.previousActions.at(-1) }),
    close: () => Promise.resolve(trainer.dispose()),
  };
}

async function loadAgent(run: string): Promise<RunAgent> {
  const record = readDomainAgent(run);
  if (record) return loadDomainRunAgent(run, record);
  const agent = await loadRunAgent(run);
  return { policy: agent.trainer.policy, stepLimit: agent.trainer.stepLimit, close: () => agent.close() };
}

export async function runAct(
  args: ParsedArgs,
  io: { input: Readable; output: Writable } = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const o = args.options as { run?: string; sample?: boolean; seed: number; top: number };
  if (!o.run) throw new Error('act needs --run RUN: the folder of a trained run (train --out, or domain train).');
  const agent = await loadAgent(o.run);
  const rng = Rng.fromSeed(o.seed, 'act');
  let bad = 0;
  let line = 0;
  try {
    for await (const text of createInterface({ input: io.input, crlfDelay: Infinity })) {
      line++;
      if (!text.trim()) continue;
      const reply = await answer(agent, text, line, rng, o);
      if ('error' in reply) bad++;
      io.output.write(safeJson(reply) + '\n');
    }
  } finally {
    await agent.close();
  }
  return bad > 0 ? 1 : 0;
}

async function answer(
  agent: RunAgent,
  text: string,
  line: number,
  rng: Rng,
  o: { sample?: boolean; top: number },
): Promise<Record<string, unknown>> {
  let state: PolicyState;
  let inferred: string[] | undefined; // the candidates inferred for this line, where it listed none
  try {
    const { infer } = agent;
    const inferring: CandidateInference | undefined = infer && ((s) => (inferred = infer(s)));
    state = stateOfLine(text, agent.stepLimit, inferring);
  } catch (error) {
    return { line, error: (error as Error).message };
  }
  const acted = await agent.policy.act([state], rng, { greedy: !o.sample });
  const probs = acted.probs[0];
  const top = state.admissible
    .map((action, i) => ({ action, probability: round(probs[i]) }))
    .sort((a, b) => b.probability - a.probability)
    .slice(0, o.top);
  const candidates = inferred ? { candidates: 'inferred', inferred_candidates: inferred } : { candidates: 'given' };
  return { line, action: acted.actions[0], probability: round(probs[acted.actionIndices[0]]), top, ...candidates };
}

const round = (p: number) => Math.round(p * 1e6) / 1e6;
