import type { Trajectory } from '../../../src/core/types';

/** The buttons of a WebShop item page, as its admissible actions start (its options follow). */
export const ITEM_PAGE_CLICKS = [
  'click[back to search]',
  'click[< prev]',
  'click[description]',
  'click[features]',
  'click[reviews]',
  'click[buy now]',
];

/** A small hand-made household episode (no env needed), with thoughts on some steps. */
export function householdEpisode(seed = 3): Trajectory {
  return {
    format: 'dreamgym-trajectory/1',
    id: `household-v0/expert/${seed}`,
    env: 'household-v0',
    seed,
    source: 'expert',
    task: {
      id: `household-v0/${seed}/0`,
      env: 'household-v0',
      instruction: 'put a apple in fridge.',
      difficulty: 0,
      origin: 'generated',
      seed,
    },
    steps: [
      {
        observation:
          'You are in the middle of a room. Looking quickly around you, you see a countertop 1, and a fridge 1.\n\nYour task is to: put a apple in fridge.',
        admissible: ['go to countertop 1', 'go to fridge 1', 'inventory', 'look'],
        thought: 'The apple is probably on the countertop.',
        action: 'go to countertop 1',
        reward: 0,
        terminated: false,
        truncated: false,
        valid: true,
      },
      {
        observation: 'You arrive at countertop 1. On the countertop 1, you see a apple 1.',
        admissible: ['go to fridge 1', 'take apple 1 from countertop 1'],
        action: 'take apple 1 from countertop 1',
        reward: 0,
        terminated: false,
        truncated: false,
        valid: true,
      },
      {
        observation: 'You pick up the apple 1 from the countertop 1.',
        admissible: ['go to countertop 1', 'go to fridge 1'],
        action: 'go to fridge 1',
        reward: 0,
        terminated: false,
        truncated: false,
        valid: true,
      },
      {
        observation: 'You arrive at fridge 1. The fridge 1 is closed.',
        admissible: ['go to countertop 1', 'open fridge 1'],
        action: 'open fridge 1',
        reward: 0,
        terminated: false,
        truncated: false,
        valid: true,
      },
      {
        observation: 'You open the fridge 1. The fridge 1 is open. In it, you see nothing.',
        admissible: ['close fridge 1', 'put apple 1 in/on fridge 1'],
        action: 'put apple 1 in/on fridge 1',
        reward: 1,
        terminated: true,
        truncated: false,
        valid: true,
      },
    ],
    final_observation: 'You put the apple 1 in/on the fridge 1.',
    result: { reward: 1, success: true, score: 1, steps: 5, terminate_reason: 'success' },
  };
}

export function webshopEpisode(seed = 11): Trajectory {
  const instruction = 'i need a grey sofa for the living room, and price lower than 300.00 dollars';
  return {
    format: 'dreamgym-trajectory/1',
    id: `webshop-lite-v0/noisy-expert/${seed}`,
    env: 'webshop-lite-v0',
    seed,
    source: 'noisy-expert',
    policy: { epsilon: 0.3 },
    task: {
      id: `webshop-lite-v0/${seed}/0.25`,
      env: 'webshop-lite-v0',
      instruction,
      difficulty: 0.25,
      origin: 'generated',
      seed,
      spec: { target: 'B0ABCDEFGH' },
    },
    steps: [
      {
        observation: `WebShop [SEP] Instruction: [SEP] ${instruction} [SEP] Search`,
        admissible: ['search[grey sofa living room]', 'search[sofa]'],
        action: 'search[grey sofa living room]',
        reward: 0,
        terminated: false,
        truncated: false,
        valid: true,
      },
      {
        observation: `Instruction: [SEP] ${instruction} [SEP] Back to Search [SEP] Page 1 (Total results: 1) [SEP] Next > [SEP] B0ABCDEFGH [SEP] Grey Sofa, Living Room [SEP] $250.00`,
        admissible: ['click[back to search]', 'click[next >]', 'click[b0abcdefgh]'],
        action: 'click[b0abcdefgh]',
        reward: 0,
        terminated: false,
        truncated: false,
        valid: true,
      },
      {
        observation: `Instruction: [SEP] ${instruction} [SEP] Back to Search [SEP] < Prev [SEP] Grey Sofa, Living Room [SEP] Price: $250.00 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now`,
        admissible: [...ITEM_PAGE_CLICKS],
        action: 'click[buy now]',
        reward: 1,
        terminated: true,
        truncated: false,
        valid: true,
      },
    ],
    final_observation: 'Thank you for shopping with us! [SEP] Your score (min 0.0, max 1.0) [SEP] 1.0',
    result: { reward: 1, success: true, score: 1, steps: 3, terminate_reason: 'success' },
  };
}
