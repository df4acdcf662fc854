/**
 * Fixtures of the experience-model tests: small buffers from generated rollouts (no dataset
 * files), answers in the model's JSON format, and a scripted "shop" world for the ScriptedChatModel
 * double that answers consistently from the prompt alone.
 */
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { makeBaselinePolicy, rolloutEpisode } from '../../../src/core/data/rollout';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import type { ChatRequest } from '../../../src/core/llm/types';
import type { Observation, Step, Task, Trajectory } from '../../../src/core/types';

export const WEBSHOP = 'webshop-lite-v0';
export const HOUSEHOLD = 'household-v0';

/** An audit report's fields, in the order its JSON prints them. */
export const AUDIT_REPORT_KEYS = [
  'env',
  'llm',
  'n',
  'valid_agreement',
  'reward_accuracy',
  'terminated_accuracy',
  'admissible_jaccard',
  'observation_f1',
  'invalid_rate',
  'failed_calls',
  'tokens_per_transition',
  'ms_per_transition',
];

/** What the oracle at (0, 0) scores in an audit: agreement everywhere, no invalid answer, no tokens. */
export const PERFECT_ORACLE_AUDIT = {
  valid_agreement: 1,
  reward_accuracy: 1,
  terminated_accuracy: 1,
  admissible_jaccard: 1,
  observation_f1: 1,
  invalid_rate: 0,
  tokens_per_transition: 0,
};

/** Expert and random episodes of an env (seeds from `firstSeed`), alternating. */
export async function rollouts(envId: string, episodes: number, firstSeed = 7000): Promise<Trajectory[]> {
  const definition = getEnvDefinition(envId);
  const env = makeEnv(envId);
  const out: Trajectory[] = [];
  for (let i = 0; i < episodes; i++) {
    const seed = firstSeed + i;
    const task = definition.generateTask(seed, [0, 0.5, 1][i % 3]);
    out.push(await rolloutEpisode(env, makeBaselinePolicy(i % 2 === 0 ? 'expert' : 'random'), { seed, task }));
  }
  return out;
}

export async function smallBuffer(envId: string, episodes = 12): Promise<ReplayBuffer> {
  const buffer = new ReplayBuffer(new MemoryBufferStore());
  await buffer.importTrajectories(await rollouts(envId, episodes), { source: 'offline', createdAt: 0 });
  return buffer;
}

/** A model answer in the output format. */
export function answer(
  fields: {
    reasoning?: string;
    valid?: boolean;
    observation?: string;
    admissible?: string[];
    reward?: number;
    terminated?: boolean;
  } = {},
): string {
  return JSON.stringify({
    ...(fields.reasoning === undefined ? { reasoning: 'the action works' } : { reasoning: fields.reasoning }),
    valid: fields.valid ?? true,
    next_state: {
      observation: fields.observation ?? 'You arrive at desk 1. On the desk 1, you see a pen 1.',
      admissible: fields.admissible ?? ['examine desk 1'],
    },
    reward: fields.reward ?? 0,
    terminated: fields.terminated ?? false,
  });
}

/** The value of a `Label: value` line of the last user message. */
export function promptLine(request: ChatRequest, label: string): string {
  const user = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const line = user.split('\n').find((l) => l.startsWith(`${label}: `));
  return line ? line.slice(label.length + 2) : '';
}

/**
 * A scripted shop for the ScriptedChatModel double, in WebShop's abstract page format: search →
 * two results → an item with two sizes → buy (success only with size large). Deterministic in
 * the prompt (state and action), as a model at temperature 0.
 */
export function scriptedShop(request: ChatRequest): string {
  const action = promptLine(request, 'Action');
  const state = promptLine(request, 'State');
  if (action.startsWith('search[')) {
    return answer({
      observation:
        'Page 1 (Total results: 2) | B0AAA00001 | Red Cotton Shirt | $10.00 | B0AAA00002 | Blue Cotton Shirt | $12.00',
      admissible: ['click[b0aaa00001]', 'click[b0aaa00002]'],
    });
  }
  if (action === 'click[next >]') return answer({ observation: 'Page 2 (Total results: 2)', admissible: [] });
  if (action === 'click[back to search]')
    return answer({ observation: 'Search', admissible: ['search[cotton shirt]'] });
  if (/^click\[b0aaa0000\d\]$/.test(action)) {
    return answer({
      observation: 'size | small | large | Cotton Shirt | Price: $10.00',
      admissible: ['click[small]', 'click[large]'],
    });
  }
  if (action === 'click[large]')
    return answer({
      observation: 'size | small | large | Cotton Shirt | Price: $10.00 (large)',
      admissible: ['click[small]', 'click[large]'],
    });
  if (action === 'click[small]')
    return answer({
      observation: 'size | small | large | Cotton Shirt | Price: $10.00 (small)',
      admissible: ['click[small]', 'click[large]'],
    });
  if (action === 'click[buy now]') {
    const success = state.includes('(large)');
    return answer({
      observation: `Thank you for shopping with us! | Your score (min 0.0, max 1.0) | ${success ? '1.0' : '0.0'}`,
      admissible: [],
      reward: success ? 1 : 0,
      terminated: true,
    });
  }
  if (action === 'click[< prev]')
    return answer({
      observation:
        'Page 1 (Total results: 2) | B0AAA00001 | Red Cotton Shirt | $10.00 | B0AAA00002 | Blue Cotton Shirt | $12.00',
      admissible: ['click[b0aaa00001]', 'click[b0aaa00002]'],
    });
  // description / features / reviews: an empty sub page (its buttons are implied).
  return answer({ observation: '(empty page)', admissible: [] });
}

/** A household task an LLM wrote: no real env behind it, so no real start page. */
export function taskWithoutStartPage(id: string): Task {
  return { id, env: HOUSEHOLD, instruction: 'put a mug in cabinet.', difficulty: 0.5, origin: 'llm' };
}

export function webshopTask(seed = 3): Task {
  return getEnvDefinition(WEBSHOP).generateTask(seed, 0.5);
}

/** A real episode's step t as a DreamContext's pieces. */
export function contextAt(
  trajectory: Trajectory,
  t: number,
): { task: Task; history: Step[]; state: Observation; action: string } {
  const step = trajectory.steps[t];
  return {
    task: trajectory.task,
    history: trajectory.steps.slice(0, t),
    state: { text: step.observation, admissible: step.admissible, task: trajectory.task },
    action: step.action,
  };
}
