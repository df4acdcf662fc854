/**
 * Fixtures of the bring-your-own-domain tests: a FOREIGN application made from our household env
 * (episodes exported as AgentGym records whose item ids are renamed to 'myapp_N', so the importer
 * knows nothing about them), and a scripted experience model (ScriptedChatModel double) that
 * answers every dreamed step with valid JSON in the household style, served to the domain's
 * experience model by the one run builder (`domainModel`).
 */
import { makeBaselinePolicy, rolloutEpisode } from '../../../src/core/data/rollout';
import { readTrajectories, writeTrajectories } from '../../../src/core/data/formats';
import { getEnvDefinition, makeEnv } from '../../../src/core/envs/registry';
import type { Domain } from '../../../src/core/domain/domain';
import type { ReplayBuffer } from '../../../src/core/buffer/buffer';
import type { ExperienceModel } from '../../../src/core/experience/types';
import type { ChatModel, ChatRequest } from '../../../src/core/llm/types';
import { buildRunParts } from '../../../src/core/train/run-parts';
import type { Trajectory } from '../../../src/core/types';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';

const cache = new Map<string, Promise<Trajectory[]>>();

/** Household episodes (expert and random alternating), cached per (n, firstSeed). */
export function householdEpisodes(n = 30, firstSeed = 91_000): Promise<Trajectory[]> {
  const key = `${n}/${firstSeed}`;
  let p = cache.get(key);
  if (!p) {
    p = (async () => {
      const definition = getEnvDefinition('household-v0');
      const env = makeEnv('household-v0');
      const out: Trajectory[] = [];
      for (let i = 0; i < n; i++) {
        const seed = firstSeed + i;
        out.push(
          await rolloutEpisode(env, makeBaselinePolicy(i % 2 === 0 ? 'expert' : 'random'), {
            seed,
            task: definition.generateTask(seed, [0, 0.5, 1][i % 3]),
          }),
        );
      }
      return out;
    })();
    cache.set(key, p);
  }
  return p;
}

/** AgentGym records of `n` household episodes, their item ids renamed to an unknown app ('myapp_N'). */
export async function foreignAgentGym(n = 30, app = 'myapp', firstSeed = 91_000): Promise<string> {
  return writeTrajectories(await householdEpisodes(n, firstSeed), 'agentgym').replace(
    /"item_id": "alfworld_/g,
    `"item_id": "${app}_`,
  );
}

/** The foreign app's episodes as the importer reads them (env 'myapp', no rewards: AgentGym has none). */
export async function foreignTrajectories(n = 30, app = 'myapp'): Promise<Trajectory[]> {
  return readTrajectories(await foreignAgentGym(n, app), 'agentgym');
}

/** The same episodes in our format under a foreign env name (outcomes recorded: rewards, terminated). */
export async function foreignOurs(n = 30, app = 'myapp'): Promise<Trajectory[]> {
  return (await householdEpisodes(n)).map((t) => ({
    ...t,
    env: app,
    task: { ...t.task, env: app, origin: 'imported' as const },
  }));
}

function promptLine(request: ChatRequest, label: string): string {
  const user = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const line = user.split('\n').find((l) => l.startsWith(`${label}: `));
  return line ? line.slice(label.length + 2) : '';
}

function answer(fields: {
  observation: string;
  admissible: string[];
  reward?: number;
  terminated?: boolean;
  valid?: boolean;
}): string {
  return JSON.stringify({
    reasoning: 'the action works',
    valid: fields.valid ?? true,
    next_state: { observation: fields.observation, admissible: fields.admissible },
    reward: fields.reward ?? 0,
    terminated: fields.terminated ?? false,
  });
}

/**
 * A household-style dream, deterministic in the prompt: 'put …' completes the task (reward 1),
 * 'take …' picks something up, anything else arrives somewhere with a towel to take. With
 * `brokenOn`, actions starting with that prefix get an unusable answer (not JSON).
 */
export function scriptedDomainChat(options: { brokenOn?: string } = {}): ScriptedChatModel {
  return new ScriptedChatModel((request) => {
    const system = request.messages[0].content;
    if (system.includes('write the first state')) {
      return JSON.stringify({
        observation: 'You are in the middle of a room. You see a cart 1 and a shelf 1.',
        admissible: ['go to cart 1', 'go to shelf 1', 'look', 'inventory'],
      });
    }
    const action = promptLine(request, 'Action');
    if (options.brokenOn && action.startsWith(options.brokenOn)) return 'I think the agent looks around.';
    if (action.startsWith('put '))
      return answer({
        observation: 'You put the towel 1 in/on the cart 1.',
        admissible: [],
        reward: 1,
        terminated: true,
      });
    if (action.startsWith('take ')) {
      return answer({
        observation: 'You pick up the towel 1.',
        admissible: ['put towel 1 in/on cart 1', 'examine towel 1'],
      });
    }
    const place = /^go to (.+)$/.exec(action)?.[1] ?? 'cart 1';
    return answer({
      observation: `You arrive at ${place}. On the ${place}, you see a towel 1.`,
      admissible: [`take towel 1 from ${place}`, `examine ${place}`],
    });
  });
}

/** The scripted chat stands in for this server. */
export const SCRIPTED_LLM = 'openai:http://127.0.0.1:9/v1#scripted' as const;

/** The domain's experience model from the one run builder, over a scripted chat. */
export async function domainModel(
  chat: ChatModel,
  domain: Domain,
  o: { k?: number; history?: number; retries?: number; buffer?: ReplayBuffer } = {},
): Promise<ExperienceModel> {
  const { experienceModel } = await buildRunParts(
    { env: domain.envId, llm: SCRIPTED_LLM, seed: 0, retrievalK: o.k ?? 4, historyLength: o.history ?? 4 },
    {
      chat,
      domain,
      ...(o.buffer ? { buffer: o.buffer } : {}),
      ...(o.retries !== undefined ? { answers: { retries: o.retries } } : {}),
    },
  );
  return experienceModel!;
}
