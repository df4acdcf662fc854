/**
 * What an experience model is told about the household (env.ts `experienceCard`), and its abstract
 * states: the welcome banner and the repeated task line are dropped; feedback is kept as is.
 * `go to R`, `look` and `inventory` are admissible everywhere: they are left out of prompts and
 * answers (`globalActions`) and re-added from the episode's first admissible list, sorted as
 * TextWorld lists them.
 */
import type { ExperienceCard, StateAbstraction } from '../env';

const WELCOME = /^-= Welcome to TextWorld, ALFRED! =-\s*/;

function householdAbstract(text: string): string {
  return text
    .replace(WELCOME, '')
    .replace(/\s*Your task is to: .*$/s, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export const householdAbstraction: StateAbstraction = {
  kind: 'household',
  abstract: householdAbstract,
};

export const householdExperienceCard: ExperienceCard = {
  name: 'mini-ALFWorld household',
  globalActions: '^(?:go to .+|look|inventory)$',
  sortedAdmissible: true,
  showAdmissible: true,
  text: [
    'mini-ALFWorld household (TextWorld).',
    'Commands: go to R, open/close R, take O from R, put O in/on R, heat O with microwave, cool O with fridge,',
    'clean O with sinkbasin, use O (lamp), examine X, look, inventory. One object can be held.',
    'Feedback like "You arrive at R. On the R, you see a O1, and a O2."',
    '/ "The R is closed." / "You pick up the O from the R.".',
    'Reward 1 and the episode ends when the goal holds, else 0.',
    'admissible: omit "go to", look, inventory (always allowed).',
  ].join(' '),
  abstraction: householdAbstraction,
};
