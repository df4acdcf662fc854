/**
 * Plain logic of the Domains page (no Svelte; unit-tested in Node): the import form's checks (the
 * CLI's own rules, from core), reading a file as a domain (core's readTrajectoriesAs and
 * buildDomain, as `dreamgym domain import` does), and the card of a stored domain in words.
 */
import { readTrajectoriesAs, type ReadFormat, type TrajectoryFormat } from '../../../core/data/formats';
import { importCommandLine, nextCommandLines } from '../../../core/domain/commands';
import {
  buildDomain,
  parseTaskDescriptions,
  validateDomainData,
  type Domain,
  type UnrecordedOutcome,
} from '../../../core/domain/domain';
import { outcomeCoverage, outcomeLine, outcomeWarnings } from '../../../core/domain/outcomes';
import type { StoredDomainManifest } from '../../storage/domain-store';
import { count } from '../buffer/buffer-view';

/** What the import form holds besides the file. */
export interface ImportSettings {
  name: string;
  format: ReadFormat;
  /** Share of episodes held out for evaluation (0 < share < 1). */
  heldOutShare: number;
  unrecordedOutcome: UnrecordedOutcome;
  /** Extra task descriptions, one a line ('#' comments and blank lines skipped). */
  tasksText: string;
  replace: boolean;
}

export const DEFAULT_IMPORT_SETTINGS: ImportSettings = {
  name: '',
  format: 'auto',
  heldOutShare: 0.2,
  unrecordedOutcome: 'unknown',
  tasksText: '',
  replace: false,
};

/** Why the form cannot import yet (the name and share checked as the CLI checks them); empty: it can. */
export function formProblems(settings: Pick<ImportSettings, 'name' | 'heldOutShare'>): string[] {
  if (settings.name.trim() === '') return ['Give the domain a name (letters, digits, - and _).'];
  const options = { minEpisodes: 0, heldOutShare: settings.heldOutShare };
  return validateDomainData(settings.name, [], options)
    .filter((p) => p.code === 'bad-name' || p.code === 'bad-option')
    .map((p) => p.message);
}

/** A name for the domain from its file's name ('My App.eto.jsonl' → 'my-app'), within the CLI's rules. */
export function nameFromFile(fileName: string): string {
  const stem = fileName.replace(/\.(jsonl|json|txt)$/i, '').replace(/\.(ours|agentgym|eto|trl)$/i, '');
  const name = stem
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, 64);
  return name === '' ? 'myapp' : name;
}

export interface ReadDomain {
  format: TrajectoryFormat;
  domain: Domain;
}

/**
 * The domain of a file's text: read in `settings.format` or the one its records show (a malformed
 * file throws DatasetImportError with every line), then validated and split (DomainError lists
 * every problem). Deterministic, as the CLI's import with seed 0.
 */
export function readDomain(text: string, fileName: string, settings: ImportSettings): ReadDomain {
  const name = settings.name.trim();
  const { format, trajectories } = readTrajectoriesAs(text, settings.format, {
    sourceName: fileName,
    defaultEnv: name, // TRL records may name no env: they are all this application's
  });
  const domain = buildDomain(name, trajectories, {
    tasks: parseTaskDescriptions(settings.tasksText),
    heldOutShare: settings.heldOutShare,
    seed: 0,
    unrecordedOutcome: settings.unrecordedOutcome,
  });
  return { format, domain };
}

/** How the file was read: 'read as eto (detected from its records)'. */
export function readAsLine(format: TrajectoryFormat, detected: boolean): string {
  return `read as ${format}${detected ? ' (detected from its records)' : ''}`;
}

// ---- the card ------------------------------------------------------------------------------------

export interface CardFact {
  /** A stable key (tests and data-fact attributes). */
  key: string;
  label: string;
  value: string;
}

export interface DomainCardView {
  name: string;
  envId: string;
  facts: CardFact[];
  /** The most frequent action kinds mined from the data (verb, or `verb[`), at most SHOWN_KINDS. */
  actionKinds: { kind: string; count: string; example: string }[];
  /** Kinds left out of the list. */
  moreKinds: number;
  /** What the experience model is told about the domain (the derived card's text). */
  cardText: string;
  warnings: string[];
  /** The CLI commands that rebuild this domain where the CLI reads it, then train on it. */
  commands: { import: string; model: string; train: string };
}

export const SHOWN_KINDS = 12;
const percent = (x: number) => `${Math.round(100 * x)}%`;
const plural = (n: number, word: string) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

/** The card of a stored domain: its numbers in words, its mined action kinds, warnings and next commands. */
export function domainCardView(manifest: StoredDomainManifest, domain: Domain): DomainCardView {
  const s = domain.stats;
  const coverage = outcomeCoverage([...domain.train, ...domain.heldOut], s.assumedSuccesses);
  const source = manifest.source;
  const [model, train] = nextCommandLines(domain.name);
  return {
    name: domain.name,
    envId: domain.envId,
    facts: [
      { key: 'source', label: 'Source', value: `${source.file}, ${readAsLine(source.format, source.detected)}` },
      {
        key: 'episodes',
        label: 'Episodes',
        value:
          `${count(s.episodes)}: ${count(s.trainEpisodes)} to train on, ${count(s.heldOutEpisodes)} held out ` +
          `(split by ${s.splitBy === 'instruction' ? 'task' : 'episode'}, share ${percent(domain.heldOutShare)}, ` +
          `seed ${domain.seed})`,
      },
      {
        key: 'tasks',
        label: 'Tasks',
        value:
          `${count(domain.tasks.length)}: ${count(s.instructions)} demonstrated, ` +
          `${plural(s.extraTasks, 'extra description')}; ${count(domain.heldOutTaskIds.length)} held out`,
      },
      {
        key: 'steps',
        label: 'Steps',
        value: `${count(s.steps)}, ${s.meanLength.toFixed(1)} an episode on average, longest ${count(s.maxLength)}`,
      },
      {
        key: 'admissible',
        label: 'Admissible lists',
        value:
          `recorded on ${count(s.stepsWithAdmissible)} of ${count(s.steps)} steps; ` +
          `inferred from the data on ${count(s.inferredAdmissibleSteps)}`,
      },
      {
        key: 'outcomes',
        label: 'Endings',
        value: `${outcomeLine(coverage)}; success rate ${percent(s.successRate)}`,
      },
      { key: 'actions', label: 'Distinct actions', value: count(s.distinctActions) },
    ],
    actionKinds: s.actionKinds
      .slice(0, SHOWN_KINDS)
      .map((k) => ({ kind: k.kind, count: count(k.count), example: k.example })),
    moreKinds: Math.max(0, s.actionKinds.length - SHOWN_KINDS),
    cardText: domain.card.text,
    warnings: [...domain.warnings, ...outcomeWarnings(coverage)],
    commands: {
      import: importCommandLine({
        file: source.file,
        name: domain.name,
        format: source.format,
        heldOutShare: domain.heldOutShare,
        seed: domain.seed,
        unrecordedOutcome: source.unrecordedOutcome,
        extraTasks: s.extraTasks > 0,
      }),
      model,
      train,
    },
  };
}

/** The list's line of a stored domain: '30 episodes, 12 tasks, eto, imported 10:42:01'. */
export function listLine(manifest: StoredDomainManifest): string {
  const when = new Date(manifest.createdAt).toLocaleString();
  return (
    `${plural(manifest.stats.episodes, 'episode')}, ${plural(manifest.tasks.length, 'task')}, ` +
    `${manifest.source.format}, imported ${when}`
  );
}
