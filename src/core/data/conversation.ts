/**
 * What the chat-style formats (AgentGym, ETO, TRL) share: an episode as alternating turns —
 * an instruction prompt, then observation (human/user) and action (gpt/assistant) turns — and
 * the way back from turns to an episode (the action is the last `Action:` line of a turn).
 */
import type { Step, Task, Trajectory } from '../types';
import { TRAJECTORY_FORMAT } from './trajectory';
import type { RecordChecker } from './errors';
import { hashString } from '../rng';

/** Short names used by AgentGym-style item ids ("webshop_6", "alfworld_3"). */
const ENV_SHORT_NAMES: Record<string, string> = { 'webshop-lite-v0': 'webshop', 'household-v0': 'alfworld' };

export function envShortName(env: string): string {
  return Object.hasOwn(ENV_SHORT_NAMES, env) ? ENV_SHORT_NAMES[env] : env;
}

export function envFromShortName(short: string): string | undefined {
  if (Object.hasOwn(ENV_SHORT_NAMES, short)) return short; // already a full id
  return Object.keys(ENV_SHORT_NAMES).find((id) => ENV_SHORT_NAMES[id] === short) ?? short;
}

/**
 * A digest (8 hex digits) of what an episode is: its env and every step's observation and action.
 * It reads only what every chat format writes and reads back, so an episode keeps its digest
 * through any round trip.
 */
export function episodeDigest(t: Trajectory): string {
  const content = JSON.stringify([t.env, t.steps.map((s) => [s.observation, s.action])]);
  return hashString(content).toString(16).padStart(8, '0');
}

/**
 * Episode ids in the chat formats: `SHORT_SOURCE_SEED_DIGEST` (webshop_expert_6_3fa9c2d1), so two
 * files with the same seeds never name different episodes alike (issue 31). An episode read back
 * from a chat file keeps its id; a repeat left in one file gets a counter (…~2). So converting
 * never merges two episodes into one.
 */
export function chatFormatIds(ts: readonly Trajectory[]): string[] {
  const taken = new Map<string, number>();
  return ts.map((t) => {
    const digest = episodeDigest(t);
    const kept = t.id.replace(/~\d+$/, '');
    const base =
      parseChatFormatId(kept).digest === digest ? kept : `${envShortName(t.env)}_${t.source}_${t.seed}_${digest}`;
    const n = (taken.get(base) ?? 0) + 1;
    taken.set(base, n);
    return n === 1 ? base : `${base}~${n}`;
  });
}

/**
 * The env (short name or id), seed and digest of a chat-format id (see chatFormatIds); AgentGym's
 * own `SHORT_SEED` reads too. Seed 0 when the id ends in none.
 */
export function parseChatFormatId(id: string): { env: string; seed: number; digest?: string } {
  const match =
    /^(.*?)_(?:(?:expert|random|noisy-expert|agent|imported|dream)_)?(\d+)(?:_([0-9a-f]{8}))?(?:~\d+)?$/.exec(id);
  if (!match) return { env: envFromShortName(id.replace(/~\d+$/, ''))!, seed: 0 };
  return { env: envFromShortName(match[1])!, seed: Number(match[2]), ...(match[3] ? { digest: match[3] } : {}) };
}

export function instructionPrompt(task: Task): string {
  return (
    `You are an agent acting in the text environment '${task.env}'. Your task: ${task.instruction}\n` +
    'After each observation, reply with your reasoning after "Thought:" and then exactly one action after "Action:".'
  );
}

/** Observation turn; household observations carry AgentGym's AVAILABLE ACTIONS line. */
export function observationText(
  env: string,
  observation: string,
  admissible: readonly string[],
  style: 'agentgym' | 'list',
): string {
  if (style === 'agentgym') {
    return env === 'household-v0' && admissible.length > 0
      ? `${observation}\nAVAILABLE ACTIONS: ${admissible.join(',')}`
      : observation;
  }
  return admissible.length > 0
    ? `${observation}\n\nAdmissible actions:\n${admissible.map((a) => `- ${a}`).join('\n')}`
    : observation;
}

export function parseObservationText(text: string): { observation: string; admissible: string[] } {
  const agentgym = text.match(/\nAVAILABLE ACTIONS: (.*)$/s);
  if (agentgym)
    return {
      observation: text.slice(0, agentgym.index),
      admissible: agentgym[1]
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    };
  const list = text.match(/\n\nAdmissible actions:\n((?:- .*(?:\n|$))+)$/);
  if (list) {
    return {
      observation: text.slice(0, list.index),
      admissible: list[1]
        .split('\n')
        .filter((l) => l.startsWith('- '))
        .map((l) => l.slice(2)),
    };
  }
  return { observation: text, admissible: [] };
}

export function actionText(step: Step, style: 'agentgym' | 'eto'): string {
  if (style === 'agentgym')
    return step.thought ? `Thought:\n${step.thought}\n\nAction:\n${step.action}` : `Action:\n${step.action}`;
  return step.thought ? `Thought: ${step.thought}\nAction: ${step.action}` : `Action: ${step.action}`;
}

/** The action is what follows the last "Action:" (same line, or the next non-empty line). */
export function parseActionText(
  text: string,
  options: { allowBare?: boolean } = {},
): { thought?: string; action: string } | undefined {
  const index = text.lastIndexOf('Action:');
  if (index < 0) {
    // A bare one-line action is accepted only where the caller expects bare actions (LLM replies).
    const bare = text.trim();
    return options.allowBare && bare && !bare.includes('\n') ? { action: bare } : undefined;
  }
  const action = text
    .slice(index + 'Action:'.length)
    .trim()
    .split('\n')[0]
    ?.trim();
  if (!action) return undefined;
  const before = text.slice(0, index);
  const thoughtMatch = before.match(/Thought:\s*([\s\S]*)$/);
  const thought = thoughtMatch ? thoughtMatch[1].trim() : undefined;
  return { ...(thought ? { thought } : {}), action };
}

/** Finds the task instruction inside an observation of our envs (or returns the text). */
export function instructionFromObservation(text: string): string {
  const webshop = text.match(/Instruction: \[SEP\] (.*?) \[SEP\]/);
  if (webshop) return webshop[1];
  const household = text.match(/Your task is to: (.*)$/m);
  if (household) return household[1].trim();
  const prompt = text.match(/Your task: (.*)$/m);
  if (prompt) return prompt[1].trim();
  return text.trim().split('\n')[0];
}

export interface Turn {
  role: 'user' | 'assistant';
  text: string;
}

/**
 * Turns → episode. Expects [instruction prompt, (optional) acknowledgement, observation, action,
 * observation, action, …, (optional) final observation]. Reward and outcome come from `outcome`
 * when the format has one (ETO's meta); otherwise the episode is marked unfinished with reward 0.
 */
export function trajectoryFromTurns(args: {
  id: string;
  env: string;
  turns: Turn[];
  check: RecordChecker;
  field: string;
  outcome?: { reward: number; success: boolean };
  /** Some turns could not be read (already reported): skip, so errors do not cascade. */
  turnsBroken?: boolean;
  /** Action turns may be the bare action, without "Action:" (a TRL string completion). */
  bareActions?: boolean;
}): Trajectory | undefined {
  const { id, env, turns, check, field } = args;
  const before = check.problems.length;
  if (args.turnsBroken) return undefined; // the turns themselves were malformed; already reported
  if (turns.length < 3) {
    check.problem(
      field,
      `needs at least an instruction, an observation and an action turn; found ${turns.length} turns`,
    );
    return undefined;
  }
  let i = 1;
  // Skip the acknowledgement ("Ok.") that AgentGym and ETO put after the instruction prompt.
  if (turns[i]?.role === 'assistant') i++;
  const steps: Step[] = [];
  let firstObservation: string | undefined;
  let finalObservation = '';
  while (i < turns.length) {
    const obsTurn = turns[i];
    if (obsTurn.role !== 'user') {
      check.problem(`${field}[${i}]`, 'expected an observation (human/user) turn here; turns must alternate');
      break;
    }
    const { observation, admissible } = parseObservationText(obsTurn.text.replace(/^Observation: /, ''));
    firstObservation ??= observation;
    const actTurn = turns[i + 1];
    if (!actTurn) {
      finalObservation = observation;
      break;
    }
    if (actTurn.role !== 'assistant') {
      check.problem(`${field}[${i + 1}]`, 'expected an action (gpt/assistant) turn here; turns must alternate');
      break;
    }
    const parsed = parseActionText(actTurn.text, { allowBare: args.bareActions });
    if (!parsed) {
      check.problem(`${field}[${i + 1}]`, 'no action found: the turn needs an "Action:" line');
      break;
    }
    steps.push({
      observation,
      admissible,
      ...(parsed.thought ? { thought: parsed.thought } : {}),
      action: parsed.action,
      reward: 0,
      terminated: false,
      truncated: false,
      valid: true,
    });
    i += 2;
  }
  if (check.problems.length > before) return undefined;
  if (steps.length === 0) {
    check.problem(field, 'the conversation has no action turns');
    return undefined;
  }
  const outcome = args.outcome;
  const last = steps[steps.length - 1];
  if (outcome) {
    last.reward = outcome.reward;
    last.terminated = outcome.success || outcome.reward > 0;
  }
  const instruction =
    instructionFromObservation(firstObservation ?? turns[0].text) || instructionFromObservation(turns[0].text);
  return {
    format: TRAJECTORY_FORMAT,
    id,
    env,
    seed: parseChatFormatId(id).seed,
    source: 'imported',
    task: { id: `${env}/imported/${id}`, env, instruction, difficulty: 0.5, origin: 'imported' },
    steps,
    final_observation: finalObservation,
    result: {
      reward: outcome?.reward ?? 0,
      success: outcome?.success ?? false,
      score: outcome?.reward ?? 0,
      steps: steps.length,
      terminate_reason: outcome
        ? outcome.success
          ? 'success'
          : last.terminated
            ? 'terminated'
            : 'truncated'
        : 'unfinished',
    },
  };
}
