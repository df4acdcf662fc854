/** Options that several commands take alike, worded the same in each command's help. */
import type { OptionSpec } from './args';

/** --backend: the tfjs backend the command computes on. */
export const BACKEND_OPTION: OptionSpec = {
  type: 'string',
  description: 'tfjs backend',
  choices: ['wasm', 'cpu'],
  default: 'wasm',
};

/** --json: `what` (e.g. 'the summary') printed as one JSON object on the last line. */
export function jsonOption(what: string): OptionSpec {
  return { type: 'boolean', description: `print ${what} as JSON on the last line` };
}
