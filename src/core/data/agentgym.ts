/**
 * AgentGym AgentTraj format: a JSON list of {item_id, conversations: [{from, loss, value}]}.
 * Turn 0 is the instruction prompt (loss null), turn 1 the gpt "Ok." (loss false), then human
 * observations and gpt "Thought:\n…\n\nAction:\n…" turns (loss true). It has no reward field.
 */
import type { Trajectory } from '../types';
import { RecordChecker } from './errors';
import { actionText, chatFormatIds, instructionPrompt, observationText, parseChatFormatId, trajectoryFromTurns, type Turn } from './conversation';

interface AgentGymTurn { from: 'human' | 'gpt'; loss: boolean | null; value: string }
export interface AgentGymRecord { item_id: string; conversations: AgentGymTurn[] }

export function toAgentGym(t: Trajectory, id: string): AgentGymRecord {
  const conversations: AgentGymTurn[] = [
    { from: 'human', loss: null, value: instructionPrompt(t.task) },
    { from: 'gpt', loss: false, value: 'Ok.' },
  ];
  for (const step of t.steps) {
    conversations.push({ from: 'human', loss: null, value: observationText(t.env, step.observation, step.admissible, 'agentgym') });
    conversations.push({ from: 'gpt', loss: true, value: actionText(step, 'agentgym') });
  }
  return { item_id: id, conversations };
}

export function writeAgentGym(ts: readonly Trajectory[]): string {
  const ids = chatFormatIds(ts);
  return JSON.stringify(ts.map((t, i) => toAgentGym(t, ids[i])), null, 1) + '\n';
}

export function fromAgentGymRecord(value: unknown, check: RecordChecker): Trajectory | undefined {
  const record = check.object(value, '');
  if (!record) return undefined;
  const itemId = check.string(record.item_id, 'item_id', { nonEmpty: true });
  const conversations = check.array(record.conversations, 'conversations');
  if (itemId === undefined || !conversations) return undefined;
  const { env } = parseChatFormatId(itemId);
  const turns: Turn[] = [];
  const problemsBefore = check.problems.length;
  conversations.forEach((raw, i) => {
    const turn = check.object(raw, `conversations[${i}]`);
    if (!turn) return;
    const from = check.oneOf(turn.from, `conversations[${i}].from`, ['human', 'gpt'] as const);
    const text = check.string(turn.value, `conversations[${i}].value`);
    if (from && text !== undefined) turns.push({ role: from === 'human' ? 'user' : 'assistant', text });
  });
  return trajectoryFromTurns({ id: itemId, env, turns, check, field: 'conversations', turnsBroken: check.problems.length > problemsBefore });
}
