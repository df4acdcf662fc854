/**
 * AgentGym AgentTraj format: a JSON list of {item_id, conversations: [{from, loss, value}]}.
 * Turn 0 is the instruction prompt (loss null), turn 1 the gpt "Ok." (loss false), then human
 * observations and gpt "Thought:\n…\n\nAction:\n…" turns (loss true). It has no reward field.
 * What it shares with ETO is in conversation-import.ts.
 */
import type { Trajectory } from '../types';
import type { RecordChecker } from './errors';
import { actionText, observationText } from './conversation';
import { conversationOf, fromConversationRecord, writeConversationFile, type TurnTexts } from './conversation-import';

interface AgentGymTurn {
  from: 'human' | 'gpt';
  loss: boolean | null;
  value: string;
}
export interface AgentGymRecord {
  item_id: string;
  conversations: AgentGymTurn[];
}

const TEXTS: TurnTexts = {
  acknowledgement: 'Ok.',
  observation: (t, state) => observationText(t.env, state.observation, state.admissible, 'agentgym'),
  action: (step) => actionText(step, 'agentgym'),
};

export function toAgentGym(t: Trajectory, id: string): AgentGymRecord {
  // The loss is on the gpt turns after the acknowledgement (the actions) only.
  const conversations = conversationOf(t, TEXTS).map(({ from, value }, i) => ({
    from,
    loss: from === 'human' ? null : i > 1,
    value,
  }));
  return { item_id: id, conversations };
}

export function writeAgentGym(ts: readonly Trajectory[]): string {
  return writeConversationFile(ts, toAgentGym);
}

export function fromAgentGymRecord(value: unknown, check: RecordChecker): Trajectory | undefined {
  return fromConversationRecord(value, check, { idField: 'item_id' });
}
