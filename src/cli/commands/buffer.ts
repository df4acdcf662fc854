/**
 * `dreamgym buffer import|stats|query|export`: the replay buffer in a folder (JSONL records +
 * a binary embedding file), the same buffer the page keeps in IndexedDB.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ReplayBuffer, transitionsToTrajectories, type ImportResult } from '../../core/buffer/buffer';
import { HashedNgramEmbedder } from '../../core/buffer/embedders';
import { StreamedRetrieval } from '../../core/buffer/streamed-retrieval';
import { FolderBufferStore } from '../../node/buffer-folder';
import { readFolderStats, scanFolderTransitions } from '../../node/buffer-folder-stream';
import { TRANSITION_SOURCES, type TransitionSource } from '../../core/buffer/types';
import {
  FORMATS,
  READ_FORMATS,
  assertFormat,
  assertReadFormat,
  readTrajectoriesAs,
  writeTrajectories,
} from '../../core/data/formats';
import { envIds } from '../../core/envs/registry';
import { UsageError, type CommandSpec, type ParsedArgs } from '../args';
import { jsonOption } from '../common-options';
import { printJsonLast, round, terminalSafe } from '../output';

export const DEFAULT_BUFFER_DIR = 'runs/buffer';
const dirOption = { type: 'string' as const, description: 'buffer folder', default: DEFAULT_BUFFER_DIR };

export const bufferImportCommand: CommandSpec = {
  name: 'buffer import',
  summary:
    'import trajectories into the buffer, all or nothing (episodes already there whole are skipped, partial ones repaired)',
  usage:
    'dreamgym buffer import FILE [--dir D] [--format auto|ours|agentgym|eto|trl] [--source offline|real|dream] ' +
    '[--wait SECONDS] [--json]',
  positionals: ['file'],
  options: {
    dir: dirOption,
    json: jsonOption('the result'),
    format: {
      type: 'string',
      description: "file format (auto: the one the first record's fields say)",
      choices: READ_FORMATS,
      default: 'auto',
    },
    source: {
      type: 'string',
      description: 'what the transitions are',
      choices: TRANSITION_SOURCES,
      default: 'offline',
    },
    env: { type: 'string', description: 'env id for TRL records without an env key' },
    wait: {
      type: 'number',
      description: 'seconds to wait while another process writes the folder',
      default: 30,
      min: 0,
    },
  },
};

export const bufferStatsCommand: CommandSpec = {
  name: 'buffer stats',
  summary: 'counts by environment and source',
  usage: 'dreamgym buffer stats [--dir D] [--json]',
  options: { dir: dirOption, json: jsonOption('the result') },
};

export const bufferQueryCommand: CommandSpec = {
  name: 'buffer query',
  summary: 'the k stored transitions most similar to a text (top-k cosine over the embeddings)',
  usage: 'dreamgym buffer query --env E --text "…" [--k K] [--source S] [--diverse] [--dir D] [--json]',
  options: {
    dir: dirOption,
    json: jsonOption('the result'),
    env: { type: 'string', description: 'only transitions of this environment' },
    text: { type: 'string', description: 'what to look for (instruction, page text or action)' },
    k: { type: 'integer', description: 'results', default: 4, min: 1, max: 1000 },
    source: { type: 'string', description: 'only this source', choices: TRANSITION_SOURCES },
    diverse: { type: 'boolean', description: 'at most one result per episode' },
  },
};

export const bufferExportCommand: CommandSpec = {
  name: 'buffer export',
  summary: "write the buffer's episodes as trajectories",
  usage: 'dreamgym buffer export --dir D --format ours|agentgym|eto|trl OUT [--json]',
  positionals: ['out'],
  options: {
    dir: dirOption,
    json: jsonOption('the result'),
    format: { type: 'string', description: 'output format', choices: FORMATS, default: 'ours' },
  },
};

/** The folder's buffer, to read (no lock; a missing folder is an error, never created) or to write (one writer at a time). */
async function openBuffer(
  dir: string,
  access: { write: false } | { write: true; waitSeconds: number },
): Promise<ReplayBuffer> {
  const store = await FolderBufferStore.open(
    dir,
    access.write ? { lockWaitMs: access.waitSeconds * 1000 } : { readOnly: true },
  );
  return new ReplayBuffer(store);
}

/** Runs `use` on the open buffer and closes it (releasing a writer's lock) whatever happens. */
async function withBuffer<T>(buffer: ReplayBuffer, use: (buffer: ReplayBuffer) => Promise<T>): Promise<T> {
  try {
    return await use(buffer);
  } finally {
    await buffer.store.close();
  }
}

export async function runBufferImport(args: ParsedArgs): Promise<void> {
  const o = args.options as {
    dir: string;
    format: string;
    source: TransitionSource;
    env?: string;
    wait: number;
    json?: boolean;
  };
  const file = args.positionals[0];
  const requested = assertReadFormat(o.format);
  const { format, trajectories } = readTrajectoriesAs(readFileSync(file, 'utf8'), requested, {
    sourceName: file,
    knownEnvs: envIds(),
    defaultEnv: o.env,
  });
  const t0 = performance.now();
  const buffer = await openBuffer(o.dir, { write: true, waitSeconds: o.wait });
  const result = await withBuffer(buffer, (b) =>
    b.importTrajectories(trajectories, { source: o.source, createdAt: Date.now() }),
  );
  const summary = { file, format, dir: o.dir, ...result, seconds: round((performance.now() - t0) / 1000, 3) };
  if (o.json) {
    printJsonLast(summary);
    return;
  }
  const repaired = result.repaired > 0 ? `; ${result.repaired} held only in part were written again whole` : '';
  console.log(
    `imported ${result.episodes} episodes (${result.transitions} transitions, ${format}` +
      `${requested === 'auto' ? ', detected' : ''}) into ${o.dir}; ` +
      `${result.skipped} already there were skipped${repaired}`,
  );
  if (result.renamed.length > 0) console.log(renamedLines(result.renamed));
}

/** Which episodes went under a new id because a different episode held theirs (the first few). */
function renamedLines(renamed: ImportResult['renamed']): string {
  const shown = renamed.slice(0, 5).map((r) => `  ${terminalSafe(r.id)} → ${terminalSafe(r.storedAs)}`);
  if (renamed.length > 5) shown.push(`  … (${renamed.length} in all; --json lists them all)`);
  return (
    `${renamed.length} episode${renamed.length === 1 ? '' : 's'} had an id the buffer already holds for a ` +
    `different episode, and ${renamed.length === 1 ? 'was' : 'were'} stored under a new id:\n${shown.join('\n')}`
  );
}

export async function runBufferStats(args: ParsedArgs): Promise<void> {
  const o = args.options as { dir: string; json?: boolean };
  // Streamed: a folder of any size, in the memory of a chunk or two (nothing is loaded).
  const stats = readFolderStats(o.dir);
  if (o.json) {
    printJsonLast({ dir: o.dir, ...stats });
    return;
  }
  console.log(
    `${o.dir}: ${stats.transitions} transitions in ${stats.episodes} episodes of ${stats.transitionTasks} tasks (${stats.tasks} in the task bank), ${stats.invalid} invalid`,
  );
  for (const [env, bySource] of Object.entries(stats.byEnvAndSource)) {
    console.log(
      `  ${terminalSafe(env).padEnd(18)} ${Object.entries(bySource)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ')}`,
    );
  }
}

export async function runBufferQuery(args: ParsedArgs): Promise<void> {
  const o = args.options as {
    dir: string;
    env?: string;
    text?: string;
    k: number;
    source?: TransitionSource;
    diverse?: boolean;
    json?: boolean;
  };
  if (!o.text) throw new UsageError('buffer query needs --text "…" (what to look for).', bufferQueryCommand);
  const t0 = performance.now();
  // Streamed: a folder of any size, a block of transitions at a time (the hits of a full load).
  const retrieval = new StreamedRetrieval(new HashedNgramEmbedder(), o.text, o.k, {
    env: o.env,
    source: o.source,
    diverse: o.diverse,
  });
  await scanFolderTransitions(o.dir, retrieval);
  const hits = retrieval.results();
  const ms = performance.now() - t0;
  const results = hits.map(({ transition: t, score }) => ({
    score: round(score, 4),
    id: t.id,
    env: t.env,
    source: t.source,
    instruction: t.instruction,
    action: t.action,
    reward: t.reward,
    observation: t.observation.slice(0, 200),
  }));
  if (o.json) {
    printJsonLast({ text: o.text, k: o.k, ms: round(ms, 2), results });
    return;
  }
  // Imported text is printed with control characters escaped (a file cannot drive the terminal).
  for (const r of results) {
    console.log(
      `${r.score.toFixed(3)}  ${terminalSafe(r.id)}\n       task: ${terminalSafe(r.instruction)}\n       action: ${terminalSafe(r.action)}  (reward ${r.reward})`,
    );
  }
  if (results.length === 0)
    console.log('no transitions match (is the buffer empty? run `dreamgym buffer import FILE` first)');
}

export async function runBufferExport(args: ParsedArgs): Promise<void> {
  const o = args.options as { dir: string; format: string; json?: boolean };
  const format = assertFormat(o.format);
  const { transitions, tasks } = await withBuffer(await openBuffer(o.dir, { write: false }), async (b) => ({
    transitions: await b.store.listTransitions(),
    tasks: new Map((await b.store.listTasks()).map((e) => [e.id, e.task])),
  }));
  const trajectories = transitionsToTrajectories(transitions, tasks);
  writeFileSync(args.positionals[0], writeTrajectories(trajectories, format));
  const summary = {
    dir: o.dir,
    format,
    out: args.positionals[0],
    episodes: trajectories.length,
    transitions: transitions.length,
  };
  if (o.json) printJsonLast(summary);
  else
    console.log(
      `exported ${summary.episodes} episodes (${summary.transitions} transitions) to ${summary.out} as ${format}`,
    );
}
