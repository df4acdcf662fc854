/**
 * Small generated fixtures for the policy and RL tests: WebShop/household-style states built
 * from strings (no environment code), a one-step "overlap bandit", and a tiny policy config.
 */
import { Rng } from '../../../src/core/rng';
import type { PolicyState } from '../../../src/core/policy/features';
import type { PolicyConfig } from '../../../src/core/policy/policy';
import { CandidatePolicy } from '../../../src/core/policy/policy';
import type { PolicyStep } from '../../../src/core/rl/batch';

export const TINY_POLICY: Partial<PolicyConfig> = {
  features: {
    buckets: 1 << 8,
    maxInstructionTokens: 32,
    obsHeadTokens: 8,
    obsTailTokens: 16,
    maxActionTokens: 8,
  },
  embeddingDim: 4,
  hidden: 6,
  valueHidden: 4,
  seed: 3,
};

export const SMALL_POLICY: Partial<PolicyConfig> = {
  features: {
    buckets: 1 << 11,
    maxInstructionTokens: 32,
    obsHeadTokens: 8,
    obsTailTokens: 32,
    maxActionTokens: 12,
  },
  embeddingDim: 16,
  hidden: 32,
  valueHidden: 16,
  seed: 7,
};

export const RESULTS_OBS = [
  'Instruction:',
  'i need a blue cotton shirt, and price lower than 40.00 dollars',
  'Back to Search',
  'Page 1 (Total results: 50)',
  'Next >',
  'B0ABC12345',
  'Red Leather Sofa With Wood Frame',
  '$299.00',
  'B0XYZ98765',
  'Blue Cotton Shirt For Men',
  '$25.50',
  'B0QQQ11111',
  'Blue Cotton Shirt Premium',
  '$45.00 to $60.00',
].join(' [SEP] ');

export const resultsState = (): PolicyState => ({
  instruction: 'i need a blue cotton shirt, and price lower than 40.00 dollars',
  observation: RESULTS_OBS,
  admissible: ['click[back to search]', 'click[next >]', 'click[b0abc12345]', 'click[b0xyz98765]', 'click[b0qqq11111]'],
  step: 1,
  maxSteps: 15,
});

export const itemState = (): PolicyState => ({
  instruction: 'i need a blue cotton shirt in size large, and price lower than 40.00 dollars',
  observation:
    'Instruction: [SEP] i need a blue cotton shirt in size large, and price lower than 40.00 dollars [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] small [SEP] large [SEP] Blue Cotton Shirt For Men [SEP] Price: $25.50 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now',
  admissible: [
    'click[back to search]',
    'click[< prev]',
    'click[small]',
    'click[large]',
    'click[description]',
    'click[features]',
    'click[reviews]',
    'click[buy now]',
  ],
  step: 2,
  maxSteps: 15,
});

export const householdState = (): PolicyState => ({
  instruction: 'put a clean apple in fridge.',
  observation:
    '-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a cabinet 1, a countertop 1, a fridge 1, and a sinkbasin 1.\n\nYour task is to: put a clean apple in fridge.',
  admissible: ['go to cabinet 1', 'go to countertop 1', 'go to fridge 1', 'go to sinkbasin 1', 'inventory', 'look'],
  step: 0,
  maxSteps: 30,
  previousActions: [],
});

const COLORS = ['red', 'blue', 'green', 'black', 'white', 'yellow', 'pink', 'grey'];
const THINGS = ['shirt', 'lamp', 'sofa', 'kettle', 'jacket', 'mug', 'desk', 'boots', 'pillow', 'router'];

/** One-step bandit: the action whose text overlaps the instruction pays 1, the others 0. */
export function banditStates(rng: Rng, n: number, actionsPerState = 4): { states: PolicyState[]; correct: number[] } {
  const states: PolicyState[] = [];
  const correct: number[] = [];
  for (let i = 0; i < n; i++) {
    const items = rng
      .sample(COLORS, actionsPerState)
      .map((c, k) => `${c} ${THINGS[(k + rng.int(0, 9)) % THINGS.length]}`);
    const target = rng.int(0, actionsPerState - 1);
    states.push({
      instruction: `i am looking for a ${items[target]}`,
      observation: `Instruction: [SEP] i am looking for a ${items[target]} [SEP] ${items.join(' [SEP] ')}`,
      admissible: items.map((it) => `click[${it}]`),
      step: 0,
      maxSteps: 1,
    });
    correct.push(target);
  }
  return { states, correct };
}

/** Act once on each bandit state; one-step episodes; `group` rollouts per state share a groupId. */
export async function banditSteps(
  policy: CandidatePolicy,
  rng: Rng,
  nTasks: number,
  group = 1,
  tag = 'b',
): Promise<PolicyStep[]> {
  const { states, correct } = banditStates(rng, nTasks);
  const repeated = states.flatMap((s) => Array.from({ length: group }, () => s));
  const acted = await policy.act(repeated, rng);
  return repeated.map((state, i) => ({
    state,
    action: acted.actionIndices[i],
    logProb: acted.logProbs[i],
    value: acted.values[i],
    prior: acted.priors[i],
    reward: acted.actionIndices[i] === correct[Math.floor(i / group)] ? 1 : 0,
    terminated: true,
    truncated: false,
    episodeId: `${tag}${i}`,
    groupId: `${tag}g${Math.floor(i / group)}`,
  }));
}

/** A step of `state` for the advantage tests: action 0, mid-episode (neither end), unless `extra` says. */
export function batchStep(
  state: PolicyState,
  episodeId: string,
  groupId: string,
  reward: number,
  extra: Partial<PolicyStep> = {},
): PolicyStep {
  return { state, action: 0, logProb: -1, reward, terminated: false, truncated: false, episodeId, groupId, ...extra };
}

/** Mean probability of the correct action on the given bandit states. */
export async function correctProbability(
  policy: CandidatePolicy,
  states: PolicyState[],
  correct: number[],
): Promise<number> {
  const r = await policy.act(states, Rng.fromSeed(0, 'eval'), { greedy: true });
  let sum = 0;
  r.probs.forEach((p, i) => {
    sum += p[correct[i]];
  });
  return sum / states.length;
}
