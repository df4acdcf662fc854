/**
 * ETO format: a JSON list of {id, conversations: [{from, value}], meta?}. Human turns are
 * "Observation: …", gpt turns "Thought: …\nAction: …"; `meta` carries ETO's outcome fields
 * (steps, reward, success, terminate_reason), which we write and read back.
 */
import type { Trajectory } from '../types';
import { RecordChecker } from './errors';
import { actionText, chatFormatIds, instructionPrompt, parseChatFormatId, trajectoryFromTurns, type Turn } from './conversation';

interface EtoTurn { from: 'human' | 'gpt'; value: string }
export interface EtoRecord {
  id: string;
  conversations: EtoTurn[];
  meta: { steps: number; reward: number; finished: boolean; success: boolean; terminate_reason: string };
}

export function toEto(t: Trajectory, id: string): EtoRecord {
  const conversations: EtoTurn[] = [
    { from: 'human', value: instructionPrompt(t.task) },
    { from: 'gpt', value: 'OK' },
  ];
  for (const step of t.steps) {
    conversations.push({ from: 'human', value: `Observation: ${step.observation}` });
    conversations.push({ from: 'gpt', value: actionText(step, 'eto') });
  }
  return {
    id, conversations,
    meta: { steps: t.result.steps, reward: t.result.reward, finished: t.result.terminate_reason !== 'unfinished',
      success: t.result.success, terminate_reason: t.result.success ? 'success' : t.result.terminate_reason === 'truncated' ? 'max_steps' : t.result.terminate_reason },
  };
}

export function writeEto(ts: readonly Trajectory[]): string {
  const ids = chatFormatIds(ts);
  return JSON.stringify(ts.map((t, i) => toEto(t, ids[i])), null, 1) + '\n';
}

export function fromEtoRecord(value: unknown, check: RecordChecker): Trajectory | undefined {
  const record = check.object(value, '');
  if (!record) return undefined;
  const id = check.string(record.id, 'id', { nonEmpty: true });
  const conversations = check.array(record.conversations, 'conversations');
  let outcome: { reward: number; success: boolean } | undefined;
  if (record.meta !== undefined) {
    const meta = check.object(record.meta, 'meta');
    if (meta) {
      const reward = check.number(meta.reward, 'meta.reward');
      const success = check.boolean(meta.success, 'meta.success');
      if (reward !== undefined && success !== undefined) outcome = { reward, success };
    }
  }
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
  return trajectoryFromTurns({ id, env, turns, check, field: 'conversations', turnsBroken: check.problems.length > problemsBefore, outcome });
}
