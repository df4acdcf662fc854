/**
 * What AgentGym and ETO share: a JSON list of records, each an episode id and `conversations` —
 * [{from: 'human' | 'gpt', value}] — the instruction prompt, an acknowledgement, then an
 * observation and an action turn a step. The formats differ only in the id's key, the turns'
 * text and their extra fields (AgentGym's `loss`, ETO's `meta`): see agentgym.ts and eto.ts.
 * Reading checks every turn and hands them to trajectoryFromTurns (conversation.ts).
 */
import type { Step, Trajectory } from '../types';
import type { RecordChecker } from './errors';
import { chatFormatIds, instructionPrompt, parseChatFormatId, trajectoryFromTurns, type Turn } from './conversation';

export interface ConversationTurn {
  from: 'human' | 'gpt';
  value: string;
}

/** How one format writes the turns of a step, and the acknowledgement after the instruction prompt. */
export interface TurnTexts {
  acknowledgement: string;
  observation(t: Trajectory, state: Pick<Step, 'observation' | 'admissible'>): string;
  action(step: Step): string;
}

/**
 * The conversation of an episode: instruction, acknowledgement, then an observation and an action
 * a step, and the final observation (what the last action led to) as a last human turn when the
 * episode has one. Readers take a trailing human turn as the final observation; without it an
 * imported episode's last transition has no next state to learn (issue 29).
 */
export function conversationOf(t: Trajectory, texts: TurnTexts): ConversationTurn[] {
  const turns: ConversationTurn[] = [
    { from: 'human', value: instructionPrompt(t.task) },
    { from: 'gpt', value: texts.acknowledgement },
  ];
  for (const step of t.steps) {
    turns.push({ from: 'human', value: texts.observation(t, step) });
    turns.push({ from: 'gpt', value: texts.action(step) });
  }
  if (t.final_observation.trim() !== '') {
    turns.push({ from: 'human', value: texts.observation(t, { observation: t.final_observation, admissible: [] }) });
  }
  return turns;
}

/** A file of the format: a JSON array of its records (one-space indent), with ids unique within the file. */
export function writeConversationFile<R>(
  ts: readonly Trajectory[],
  toRecord: (t: Trajectory, id: string) => R,
): string {
  const ids = chatFormatIds(ts);
  return (
    JSON.stringify(
      ts.map((t, i) => toRecord(t, ids[i])),
      null,
      1,
    ) + '\n'
  );
}

/** The episode's reward and success, where the format records them (ETO's `meta`). */
export type Outcome = { reward: number; success: boolean };

/**
 * One record back to an episode, or undefined with its problems reported to `check`: the id
 * (under `idField`, naming the env and seed), the conversation's turns, and the outcome that
 * `readOutcome` finds (checked after the id and the turns' list, before the turns themselves).
 */
export function fromConversationRecord(
  value: unknown,
  check: RecordChecker,
  format: {
    idField: string;
    readOutcome?: (record: Record<string, unknown>, check: RecordChecker) => Outcome | undefined;
  },
): Trajectory | undefined {
  const record = check.object(value, '');
  if (!record) return undefined;
  const id = check.string(record[format.idField], format.idField, { nonEmpty: true });
  const conversations = check.array(record.conversations, 'conversations');
  const outcome = format.readOutcome?.(record, check);
  if (id === undefined || !conversations) return undefined;
  const { env } = parseChatFormatId(id);
  const turns: Turn[] = [];
  const problemsBefore = check.problems.length;
  conversations.forEach((raw, i) => {
    const turn = check.object(raw, `conversations[${i}]`);
    if (!turn) return;
    const from = check.oneOf(turn.from, `conversations[${i}].from`, ['human', 'gpt'] as const);
    const text = check.string(turn.value, `conversations[${i}].value`);
    if (from && text !== undefined) turns.push({ role: from === 'human' ? 'user' : 'assistant', text });
  });
  const turnsBroken = check.problems.length > problemsBefore;
  return trajectoryFromTurns({ id, env, turns, check, field: 'conversations', turnsBroken, outcome });
}
