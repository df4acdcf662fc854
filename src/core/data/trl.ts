/**
 * TRL conversational datasets (JSONL): `{"messages": [{role, content}]}` per episode, the form
 * TRL's SFTTrainer takes. On import the prompt–completion form is accepted too: conversational
 * (`{"prompt": [...], "completion": [...]}`, read as prompt followed by completion) or standard
 * (`{"prompt": "…", "completion": "…"}`, a one-step episode: the prompt is the instruction and the
 * observation, the completion the action, with or without "Action:"). Our extra `env` and `id`
 * keys ride along (TRL ignores unknown columns) so a round trip keeps them.
 */
import type { Trajectory } from '../types';
import { RecordChecker } from './errors';
import {
  actionText,
  chatFormatIds,
  envShortName,
  instructionPrompt,
  observationText,
  trajectoryFromTurns,
  type Turn,
} from './conversation';

interface TrlMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}
export interface TrlRecord {
  id: string;
  env: string;
  messages: TrlMessage[];
}

export function toTrl(t: Trajectory, id: string): TrlRecord {
  const messages: TrlMessage[] = [{ role: 'system', content: instructionPrompt(t.task) }];
  for (const step of t.steps) {
    messages.push({ role: 'user', content: observationText(t.env, step.observation, step.admissible, 'list') });
    messages.push({ role: 'assistant', content: actionText(step, 'eto') });
  }
  return { id, env: t.env, messages };
}

export function writeTrl(ts: readonly Trajectory[]): string {
  const ids = chatFormatIds(ts);
  return ts.map((t, i) => JSON.stringify(toTrl(t, ids[i])) + '\n').join('');
}

function readMessages(list: unknown[], field: string, check: RecordChecker, turns: Turn[]): void {
  list.forEach((raw, i) => {
    const message = check.object(raw, `${field}[${i}]`);
    if (!message) return;
    const role = check.oneOf(message.role, `${field}[${i}].role`, ['system', 'user', 'assistant'] as const);
    const content = check.string(message.content, `${field}[${i}].content`);
    if (!role || content === undefined) return;
    // The system prompt stands where the instruction turn stands in AgentGym/ETO.
    turns.push({ role: role === 'assistant' ? 'assistant' : 'user', text: content });
  });
}

/** The prompt–completion form: each part a list of messages, or a string (see the file comment). */
function readPromptCompletion(record: Record<string, unknown>, check: RecordChecker, turns: Turn[]): void {
  if (typeof record.prompt === 'string') {
    turns.push({ role: 'user', text: record.prompt }, { role: 'user', text: record.prompt });
  } else {
    const prompt = check.array(record.prompt, 'prompt');
    if (prompt) readMessages(prompt, 'prompt', check, turns);
  }
  if (typeof record.completion === 'string') {
    turns.push({ role: 'assistant', text: record.completion });
  } else {
    const completion = check.array(record.completion, 'completion');
    if (completion) readMessages(completion, 'completion', check, turns);
  }
}

export function fromTrlRecord(value: unknown, check: RecordChecker, defaultEnv?: string): Trajectory | undefined {
  const record = check.object(value, '');
  if (!record) return undefined;
  const turns: Turn[] = [];
  const problemsBefore = check.problems.length;
  if (record.messages !== undefined) {
    const messages = check.array(record.messages, 'messages');
    if (messages) readMessages(messages, 'messages', check, turns);
  } else if (record.prompt !== undefined || record.completion !== undefined) {
    readPromptCompletion(record, check, turns);
  } else {
    check.problem('messages', 'missing field: a TRL record needs "messages" (or "prompt" and "completion")');
    return undefined;
  }
  const env = check.string(record.env ?? defaultEnv, 'env', { nonEmpty: true });
  const id = typeof record.id === 'string' && record.id ? record.id : `${envShortName(env ?? 'unknown')}_${check.line}`;
  if (env === undefined) return undefined;
  return trajectoryFromTurns({
    id,
    env,
    turns,
    check,
    field: record.messages !== undefined ? 'messages' : 'prompt',
    turnsBroken: check.problems.length > problemsBefore,
    bareActions: typeof record.completion === 'string',
  });
}
