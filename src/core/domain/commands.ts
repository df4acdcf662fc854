/**
 * The command lines that carry an imported domain on in the CLI: its import (so the page can say
 * how to rebuild the same domain where the CLI reads it), then its learned experience model and
 * the dream with it. One wording for `dreamgym domain import` and the page's Domains card.
 */
import type { TrajectoryFormat } from '../data/formats';
import type { UnrecordedOutcome } from './domain';

/** A word as one shell word (quoted when it holds more than letters, digits and ./_-). */
export function shellWord(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface ImportCommandOptions {
  file: string;
  name: string;
  format: TrajectoryFormat;
  heldOutShare: number;
  seed: number;
  unrecordedOutcome: UnrecordedOutcome;
  /** Extra task descriptions were given (their file is the user's to write: TASKS.txt). */
  extraTasks: boolean;
}

/** `dreamgym domain import` with the options that rebuild the same domain (the split is seeded). */
export function importCommandLine(o: ImportCommandOptions): string {
  return [
    `npm run dreamgym -- domain import ${shellWord(o.file)} --name ${o.name} --format ${o.format}`,
    o.heldOutShare !== 0.2 ? ` --held-out ${o.heldOutShare}` : '',
    o.seed !== 0 ? ` --seed ${o.seed}` : '',
    o.unrecordedOutcome !== 'unknown' ? ` --unrecorded-outcome ${o.unrecordedOutcome}` : '',
    o.extraTasks ? ' --tasks TASKS.txt' : '',
  ].join('');
}

/** What to run after an import: train the domain's learned experience model, then dream with it. */
export function nextCommandLines(name: string, dirOption = ''): [string, string] {
  const model = `runs/models/${name}`;
  return [
    `npm run dreamgym -- expmodel train --domain ${name}${dirOption} --out ${model}`,
    `npm run dreamgym -- domain train --name ${name}${dirOption} --llm learned:${model}`,
  ];
}
