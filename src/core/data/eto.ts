/**
 * ETO format: a JSON list of {id, conversations: [{from, value}], meta?}. Human turns are
 * "Observation: …", gpt turns "Thought: …\nAction: …"; `meta` carries ETO's outcome fields
 * (steps, reward, success, terminate_reason), which we write and read back. What it shares with
 * AgentGym is in conversation-import.ts.
 */
import type { Trajectory } from '../types';
import type { RecordChecker } from './errors';
import { actionText } from './conversation';
import {
  conversationOf,
  fromConversationRecord,
  writeConversationFile,
  type ConversationTurn,
  type Outcome,
  type TurnTexts,
} from './conversation-import';

export interface EtoRecord {
  id: string;
  conversations: ConversationTurn[];
  meta: { steps: number; reward: number; finished: boolean; success: boolean; terminate_reason: string };
}

const TEXTS: TurnTexts = {
  acknowledgement: 'OK',
  observation: (_t, state) => `Observation: ${state.observation}`,
  action: (step) => actionText(step, 'eto'),
};

export function toEto(t: Trajectory, id: string): EtoRecord {
  const { result } = t;
  const terminateReason = result.success
    ? 'success'
    : result.terminate_reason === 'truncated'
      ? 'max_steps'
      : result.terminate_reason;
  return {
    id,
    conversations: conversationOf(t, TEXTS),
    meta: {
      steps: result.steps,
      reward: result.reward,
      finished: result.terminate_reason !== 'unfinished',
      success: result.success,
      terminate_reason: terminateReason,
    },
  };
}

export function writeEto(ts: readonly Trajectory[]): string {
  return writeConversationFile(ts, toEto);
}

/** `meta`'s reward and success, when the record has a `meta`. */
function readMeta(record: Record<string, unknown>, check: RecordChecker): Outcome | undefined {
  if (record.meta === undefined) return undefined;
  const meta = check.object(record.meta, 'meta');
  if (!meta) return undefined;
  const reward = check.number(meta.reward, 'meta.reward');
  const success = check.boolean(meta.success, 'meta.success');
  return reward !== undefined && success !== undefined ? { reward, success } : undefined;
}

export function fromEtoRecord(value: unknown, check: RecordChecker): Trajectory | undefined {
  return fromConversationRecord(value, check, { idField: 'id', readOutcome: readMeta });
}
