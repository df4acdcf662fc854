/** A recorded transition for tests: a mid-episode step of a small room, every field overridable. */
import type { Transition } from '../../../src/core/types';

export function transition(fields: Partial<Transition> = {}): Transition {
  return {
    id: 't',
    env: 'byo:app',
    taskId: 'task',
    instruction: 'do it',
    episodeId: 'e',
    stepIndex: 3,
    observation: 'a room',
    admissible: ['go to a', 'go to b'],
    action: 'go to a',
    nextObservation: 'you arrive at a',
    nextAdmissible: [],
    reward: 0,
    terminated: false,
    truncated: false,
    source: 'offline',
    valid: true,
    createdAt: 0,
    ...fields,
  };
}
