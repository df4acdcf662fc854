/**
 * What household adds to the policy's features (envs/env.ts `policyFeatures`): whether the object in hand is one the
 * instruction names (the last 'take X from Y' not yet followed by a put), which says a put is due.
 */
import type { PolicyFeatureSet, PolicyState } from '../../policy/features';

/** The object type of a 'take' (its index dropped), or null for other actions. */
function takenType(actionLower: string): string | null {
  const m = /^take\s+(.+?)\s+from\s+/.exec(actionLower);
  return m ? m[1].replace(/\s+\d+$/, '').trim() : null;
}

function prepare(state: PolicyState): { state: number[]; row(): { values: number[] } } {
  const words = new Set(
    state.instruction
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean),
  );
  let holding = false;
  for (const a of state.previousActions ?? []) {
    const lower = a.toLowerCase();
    const taken = takenType(lower);
    if (taken !== null) holding = words.has(taken);
    else if (lower.startsWith('put ') || lower.startsWith('move ')) holding = false;
  }
  const values = [holding ? 1 : 0];
  return { state: [], row: () => ({ values }) };
}

export const householdPolicyFeatures: PolicyFeatureSet = {
  row: ['holding_instruction_object'],
  state: [],
  prepare,
};
