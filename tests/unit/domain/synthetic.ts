/**
 * A tiny synthetic application with its own verbs, generated in the tests (no env of ours): a
 * crate yard where a task asks to stack a crate of some colour on a pallet of some wood. The
 * demonstration lifts that crate, then places it on that pallet (2 steps, success). Failed
 * episodes inspect bays until the step limit (truncated). Every step lists its candidates, so the
 * demonstrated action is always a function of the state: cloning can reach full agreement.
 */
import type { Step, Trajectory } from '../../../src/core/types';
import { ScriptedChatModel } from '../../doubles/scripted-chat-model';

export const COLOURS = ['red', 'blue', 'green', 'amber'] as const;
export const WOODS = ['oak', 'pine', 'birch'] as const;
const BAYS = ['north', 'south'] as const;

const yard = 'Yard view. Crates waiting: red, blue, green, amber. Pallets free: oak, pine, birch.';
const lifts = COLOURS.map((c) => `lift the ${c} crate`);
const inspections = BAYS.map((b) => `inspect the ${b} bay`);
const holding = (colour: string) => `You hold the ${colour} crate. Pallets free: oak, pine, birch.`;
const places = WOODS.map((w) => `place it on the ${w} pallet`);

function step(observation: string, admissible: string[], action: string, end?: 'success' | 'cut'): Step {
  return {
    observation,
    admissible,
    action,
    reward: end === 'success' ? 1 : 0,
    terminated: end === 'success',
    truncated: end === 'cut',
    valid: true,
  };
}

function trajectory(
  id: string,
  instruction: string,
  steps: Step[],
  reason: Trajectory['result']['terminate_reason'],
): Trajectory {
  const success = reason === 'success';
  return {
    format: 'dreamgym-trajectory/1',
    id,
    env: 'crateyard',
    seed: 0,
    task: { id: `crateyard:${instruction}`, env: 'crateyard', instruction, difficulty: 0, origin: 'imported' },
    steps,
    final_observation: success ? 'The crate stands on its pallet. Task done.' : 'You are still in the yard.',
    result: { reward: success ? 1 : 0, success, score: success ? 1 : 0, steps: steps.length, terminate_reason: reason },
    source: success ? 'expert' : 'random',
  };
}

/** The demonstration of stacking `colour` on `wood` (2 steps, success). */
export function demonstration(colour: string, wood: string, id: string): Trajectory {
  const instruction = `stack the ${colour} crate on the ${wood} pallet`;
  return trajectory(
    id,
    instruction,
    [
      step(yard, [...lifts, ...inspections], `lift the ${colour} crate`),
      step(holding(colour), places, `place it on the ${wood} pallet`, 'success'),
    ],
    'success',
  );
}

/** A failed episode: inspections until the step limit (`length` steps, the last cut). */
export function wandering(colour: string, wood: string, id: string, length = 4): Trajectory {
  const steps = Array.from({ length }, (_, i) =>
    step(yard, [...lifts, ...inspections], inspections[i % 2], i === length - 1 ? 'cut' : undefined),
  );
  return trajectory(id, `stack the ${colour} crate on the ${wood} pallet`, steps, 'truncated');
}

/** Every (colour, wood) task demonstrated `repeats` times, plus `failures` wandering episodes. */
export function crateYard(repeats = 2, failures = 3): Trajectory[] {
  const out: Trajectory[] = [];
  for (let r = 0; r < repeats; r++)
    for (const c of COLOURS) for (const w of WOODS) out.push(demonstration(c, w, `demo-${c}-${w}-${r}`));
  for (let k = 0; k < failures; k++) out.push(wandering(COLOURS[k % 4], WOODS[k % 3], `wander-${k}`));
  return out;
}

/**
 * A scripted experience model of the yard (the reasoning model's JSON answers) that ends every
 * step with failure: its dream ends each episode at its first step.
 */
export function crateYardChat(): ScriptedChatModel {
  return new ScriptedChatModel((request) => {
    const system = request.messages[0].content;
    if (system.includes('write the first state')) return JSON.stringify({ observation: yard, admissible: lifts });
    return JSON.stringify({
      reasoning: 'the yard answers',
      valid: true,
      next_state: { observation: holding('red'), admissible: places },
      reward: 0,
      terminated: true,
    });
  });
}
