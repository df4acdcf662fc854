/**
 * `dreamgym expmodel train|export-sft`: the learned experience model (the paper's SFT step for
 * M_exp) from real trajectories — a registered env's shipped dataset (or --dataset FILE), or an
 * imported domain's episodes.
 *
 *   expmodel train --env webshop-lite-v0 --out runs/expmodel/webshop     train, checkpoint every epoch
 *   expmodel train … --resume                                            continue from OUT/checkpoint
 *   expmodel export-sft --env webshop-lite-v0 --out sft.jsonl            TRL `messages` JSONL
 *   expmodel verdict --model DIR --env webshop-lite-v0                   (re)fit the verdict head (verdict.ts) only
 *
 * Then `--llm learned:OUT` dreams with it in audit, dream, train, experiment and domain train.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { ReplayBuffer } from '../../core/buffer/buffer';
import { builtInDomainCard, type DomainCard } from '../../core/experience/domain-card';
import {
  learnedTrainOptions,
  trainLearnedModel,
  type LearnedTrainOptions,
} from '../../core/experience/learned/train-model';
import { VERDICT_WEIGHT } from '../../core/experience/learned/fit';
import {
  bufferRetriever,
  describePairAccount,
  realEpisodes,
  splitByTask,
  trlMessagesJsonl,
} from '../../core/experience/learned/sft-data';
import { bufferFromTrajectories } from '../../core/experience/seed-buffer';
import { trajectoriesToJsonl } from '../../core/data/trajectory';
import type { Trajectory } from '../../core/types';
import { envIds } from '../../core/envs/registry';
import { initBackend } from '../../core/tfjs/backend';
import { DEFAULT_DOMAIN_DIR, openDomainFolder } from '../../node/domain-folder';
import {
  readCheckpoint,
  readModelFolder,
  removeCheckpoint,
  writeCheckpoint,
  writeModelFolder,
  type SavedCheckpoint,
} from '../../node/model-folder';
import { encodeModelFiles } from '../../core/experience/learned/model-file';
import {
  describeHead,
  fitHeadFor,
  headSummary,
  MIN_VERDICT_EXAMPLES,
  type VerdictHead,
} from '../../core/experience/learned/verdict';
import { UsageError, type CommandSpec, type ParsedArgs } from '../args';
import { BACKEND_OPTION, jsonOption } from '../common-options';
import { printJsonLast, round } from '../output';
import { offlineTrajectories } from '../experience-options';

const sourceOptions = {
  env: {
    type: 'string' as const,
    description: 'a registered environment: learn from its shipped dataset (public/datasets/ENV.jsonl) or --dataset',
  },
  dataset: {
    type: 'string' as const,
    description: 'our trajectory JSONL to learn from instead of the shipped dataset (with --env)',
  },
  domain: {
    type: 'string' as const,
    description: 'an imported domain (dreamgym domain import): learn from its training episodes',
  },
  dir: {
    type: 'string' as const,
    description: 'folder of imported domains (with --domain)',
    default: DEFAULT_DOMAIN_DIR,
  },
  k: {
    type: 'integer' as const,
    description:
      'retrieved examples in each context (0 = no retrieval; default 4, and 0 for a domain whose lists are inferred)',
    default: 4,
    min: 0,
    max: 64,
  },
  history: {
    type: 'integer' as const,
    description: 'past actions in each context (0 = no history)',
    default: 4,
    min: 0,
    max: 100,
  },
  seed: {
    type: 'integer' as const,
    description: 'seed of the split, the initial weights and the batch order',
    default: 0,
  },
};

/** The parsed values of `sourceOptions` (each command's own options come on top). */
type SourceValues = {
  env?: string;
  dataset?: string;
  domain?: string;
  dir: string;
  k: number;
  history: number;
  seed: number;
};

export const expmodelTrainCommand: CommandSpec = {
  name: 'expmodel train',
  summary: 'train a learned experience model on real trajectories (tfjs): then --llm learned:OUT dreams with it',
  usage:
    'dreamgym expmodel train (--env ENV [--dataset FILE] | --domain NAME [--dir D]) --out DIR [--epochs N] [--episodes N] [--k K] [--history H] [--seed S] ' +
    '[--verdict-weight W] [--generator-verdict] [--resume] [--json]',
  options: {
    ...sourceOptions,
    out: { type: 'string', description: 'model folder (model.json, weights.bin; checkpoint/ while training)' },
    epochs: {
      type: 'integer',
      description: 'most epochs (early stopping may end sooner)',
      default: 12,
      min: 1,
      max: 10_000,
    },
    episodes: {
      type: 'integer',
      description: 'at most this many training episodes (data-efficiency studies)',
      min: 1,
      max: 10_000_000,
    },
    'batch-size': { type: 'integer', description: 'pairs per batch', default: 16, min: 1, max: 4096 },
    'learning-rate': { type: 'number', description: 'Adam learning rate', default: 2e-3 },
    'd-model': { type: 'integer', description: 'network width', default: 64, min: 8, max: 1024 },
    'verdict-weight': {
      type: 'number',
      description: 'loss weight of the verdict tokens (valid, terminated, reward) against 1 for the rest',
      default: VERDICT_WEIGHT,
    },
    'generator-verdict': {
      type: 'boolean',
      description: "fit no verdict head: the generator's own reward judges an episode's end (see verdict.ts)",
    },
    name: { type: 'string', description: "the model's name in labels (default: the env or domain)" },
    resume: { type: 'boolean', description: 'continue from OUT/checkpoint' },
    backend: BACKEND_OPTION,
    json: jsonOption('the summary'),
  },
};

export const expmodelExportCommand: CommandSpec = {
  name: 'expmodel export-sft',
  summary: "write the SFT pairs as TRL messages JSONL (the reasoning model's prompt → its JSON answer)",
  usage:
    'dreamgym expmodel export-sft (--env ENV [--dataset FILE] | --domain NAME [--dir D]) --out FILE.jsonl [--k K] [--seed S] [--json]',
  options: {
    ...sourceOptions,
    out: { type: 'string', description: 'the JSONL file to write' },
    json: jsonOption('the summary'),
  },
};

export const expmodelVerdictCommand: CommandSpec = {
  name: 'expmodel verdict',
  summary:
    "fit (or remove) a trained model's verdict head: its reward at an episode's end from comparison features, not the generator",
  usage:
    'dreamgym expmodel verdict --model DIR (--env ENV [--dataset FILE] | --domain NAME [--dir D]) [--remove] [--json]',
  options: {
    ...sourceOptions,
    model: { type: 'string', description: 'the model folder (model.json is rewritten; weights.bin stays as it is)' },
    remove: { type: 'boolean', description: "drop the head: the generator's reward stands (the ablation)" },
    json: jsonOption('the summary'),
  },
};

interface Source {
  env: string;
  card: DomainCard;
  buffer: ReplayBuffer;
  label: string;
  /** A hash of the episodes learned from: a checkpoint records it, and a resume on other data is refused. */
  fingerprint: string;
  close(): Promise<void>;
}

export function dataFingerprint(trajectories: readonly Trajectory[]): string {
  return createHash('sha256').update(trajectoriesToJsonl(trajectories)).digest('hex').slice(0, 16);
}

/** The buffer of real episodes a command learns from, and the env's card. */
async function openSource(
  o: Pick<SourceValues, 'env' | 'dataset' | 'domain' | 'dir'>,
  spec: CommandSpec,
): Promise<Source> {
  if (o.env && o.domain) throw new UsageError(`'${spec.name}' takes --env or --domain, not both.`, spec);
  if (o.domain) {
    const { domain, buffer } = await openDomainFolder(o.dir, o.domain); // both from one data folder
    return {
      env: domain.envId,
      card: domain.card,
      buffer,
      label: `domain ${domain.name}`,
      fingerprint: dataFingerprint(domain.train),
      close: () => buffer.store.close(),
    };
  }
  if (!o.env) throw new UsageError(`'${spec.name}' needs --env ENV (e.g. webshop-lite-v0) or --domain NAME.`, spec);
  const card = builtInDomainCard(o.env);
  if (!card)
    throw new UsageError(
      `'${o.env}' is not a registered environment (${envIds().join(', ')}); an imported domain goes with --domain NAME.`,
      spec,
    );
  const trajectories = await offlineTrajectories(o.env, o.dataset, spec);
  const buffer = await bufferFromTrajectories(trajectories);
  return {
    env: o.env,
    card,
    buffer,
    label: o.dataset ?? `public/datasets/${o.env}.jsonl`,
    fingerprint: dataFingerprint(trajectories),
    close: () => buffer.store.close(),
  };
}

/**
 * The examples a context retrieves: as given, else 4, but none for a domain whose lists are inferred
 * (DomainCard.inferredAdmissible). Its pairs are then 82 tokens instead of 203 on 200 household
 * episodes, so its model trains in 2.5 times less time (docs/results/imported-domains.md).
 */
export function retrievalK(k: number, given: readonly string[], card: DomainCard): number {
  return given.includes('k') || !card.inferredAdmissible ? k : 0;
}

function checkCounts(o: { k: number; history: number }, spec: CommandSpec): void {
  if (!(o.k >= 0 && o.k <= 16))
    throw new UsageError(`--k must be within 0..16 (retrieved examples), got ${o.k}.`, spec);
  if (!(o.history >= 0 && o.history <= 16))
    throw new UsageError(`--history must be within 0..16 (past actions), got ${o.history}.`, spec);
}

/** The training options a checkpoint keeps, each as the saved options hold it. */
const SAVED_OPTIONS: readonly [string, (saved: LearnedTrainOptions) => unknown][] = [
  ['k', (s) => s.format.k],
  ['history', (s) => s.format.historyLength],
  ['seed', (s) => s.fit.seed],
  ['epochs', (s) => s.fit.epochs],
  ['episodes', (s) => s.maxEpisodes],
  ['batch-size', (s) => s.fit.batchSize],
  ['learning-rate', (s) => s.fit.learningRate],
  ['d-model', (s) => s.network.dModel],
  ['verdict-weight', (s) => s.fit.verdictWeight ?? VERDICT_WEIGHT],
  ['generator-verdict', (s) => s.verdictHead === false],
  ['name', (s) => s.name],
];

/** The given options that differ from the checkpoint's: a resume continues that training exactly. */
export function resumeConflicts(
  given: readonly string[],
  options: Record<string, unknown>,
  saved: LearnedTrainOptions,
): string[] {
  return SAVED_OPTIONS.filter(([name, read]) => given.includes(name) && options[name] !== read(saved)).map(
    ([name, read]) => `--${name} ${String(options[name])} (the checkpoint has ${JSON.stringify(read(saved) ?? null)})`,
  );
}

/** Refuses a resume whose options, env or data differ from the checkpoint's; says how to go on. */
function checkResume(
  checkpoint: SavedCheckpoint,
  conflicts: string[],
  source: Source,
  out: string,
  spec: CommandSpec,
): void {
  if (checkpoint.env !== source.env)
    conflicts.push(`${source.label} is of '${source.env}' (the checkpoint trains '${checkpoint.env}')`);
  if (conflicts.length > 0)
    throw new UsageError(
      `--resume continues the training saved in ${out}/checkpoint exactly, so its settings cannot change; ` +
        `these conflict:\n- ${conflicts.join('\n- ')}\n` +
        'Drop them to resume, or train anew without --resume in another --out.',
      spec,
    );
  if (checkpoint.dataFingerprint === undefined)
    process.stderr.write(`warning: the checkpoint in ${out} predates data fingerprints: its data cannot be checked.\n`);
  else if (checkpoint.dataFingerprint !== source.fingerprint)
    throw new UsageError(
      `--resume: the episodes of ${source.label} changed since the checkpoint in ${out}/checkpoint was saved ` +
        `(data ${source.fingerprint}, checkpoint ${checkpoint.dataFingerprint}), so the training would go on half on ` +
        `each. Train anew without --resume (another --out, or delete ${out}/checkpoint), ` +
        'or resume on the data it began with.',
      spec,
    );
}

export async function runExpmodelTrain(args: ParsedArgs): Promise<void> {
  const o = args.options as SourceValues & {
    out?: string;
    epochs: number;
    episodes?: number;
    'batch-size': number;
    'learning-rate': number;
    'd-model': number;
    'verdict-weight': number;
    'generator-verdict'?: boolean;
    name?: string;
    resume?: boolean;
    backend: 'wasm' | 'cpu';
    json?: boolean;
  };
  const spec = expmodelTrainCommand;
  if (!o.out) throw new UsageError(`'${spec.name}' needs --out DIR (the model folder).`, spec);
  checkCounts(o, spec);
  for (const [name, value, min] of [
    ['epochs', o.epochs, 1],
    ['batch-size', o['batch-size'], 1],
    ['d-model', o['d-model'], 8],
    ['episodes', o.episodes ?? 1, 1],
    ['verdict-weight', o['verdict-weight'], 1],
  ] as const) {
    if (!(value >= min)) throw new UsageError(`--${name} must be at least ${min}, got ${value}.`, spec);
  }
  const resume = o.resume ? readCheckpoint(o.out) : null;
  if (o.resume && !resume)
    throw new UsageError(
      `--resume: there is no checkpoint in ${o.out}/checkpoint; train without --resume first.`,
      spec,
    );
  const conflicts = resume ? resumeConflicts(args.given ?? [], o, resume.options) : [];
  const source = await openSource(o, spec);
  try {
    if (resume) checkResume(resume, conflicts, source, o.out, spec);
    const backend = await initBackend(o.backend);
    process.stderr.write(`backend: ${backend.reason}\n`);
    const options: LearnedTrainOptions = learnedTrainOptions({
      name: o.name ?? (o.domain ? `domain ${o.domain}` : o.env),
      ...(o.episodes !== undefined ? { maxEpisodes: o.episodes } : {}),
      ...(o['generator-verdict'] ? { verdictHead: false } : {}),
      network: { dModel: o['d-model'] },
      format: { k: retrievalK(o.k, args.given ?? [], source.card), historyLength: o.history },
      fit: {
        epochs: o.epochs,
        batchSize: o['batch-size'],
        learningRate: o['learning-rate'],
        seed: o.seed,
        ...(o['verdict-weight'] !== VERDICT_WEIGHT ? { verdictWeight: o['verdict-weight'] } : {}),
      },
    });
    let lastLine = 0;
    const result = await trainLearnedModel(source.buffer, source.env, source.card, options, {
      now: () => performance.now(),
      backend: backend.backend,
      ...(resume ? { resume } : {}),
      onCheckpoint: (checkpoint) => writeCheckpoint(o.out!, { ...checkpoint, dataFingerprint: source.fingerprint }),
      onProgress: (event) => {
        if (event.kind === 'epoch') {
          const r = event.record;
          process.stderr.write(
            `epoch ${r.epoch}: train loss ${r.trainLoss.toFixed(4)}, validation loss ${r.validationLoss.toFixed(4)}${event.best ? ' (best)' : ''}, ` +
              `${Math.round(r.tokensPerSecond)} tokens/s, ${r.seconds.toFixed(0)} s${event.stopping ? ' — stopping early' : ''}\n`,
          );
        } else if (performance.now() - lastLine > 5000 || event.batch === event.batches) {
          lastLine = performance.now();
          const left = event.secondsLeft === null ? 'estimating' : `${Math.round(event.secondsLeft)} s left at most`;
          process.stderr.write(
            `epoch ${event.epoch}/${event.epochs} batch ${event.batch}/${event.batches}: loss ${event.loss.toFixed(4)}, ${Math.round(event.tokensPerSecond)} tokens/s, ${left}\n`,
          );
        }
      },
    });
    writeModelFolder(o.out, result);
    removeCheckpoint(o.out);
    const t = result.parsed.training;
    const summary = {
      out: o.out,
      env: source.env,
      name: result.parsed.name,
      data: t.data,
      // "N pairs from M recorded transitions; K left out: …": no step is dropped silently.
      pairs: t.data.account ? describePairAccount(t.data.account) : null,
      epochs: t.epochs.length,
      best_epoch: t.bestEpoch,
      best_validation_loss: round(t.bestValidationLoss),
      seconds: round(t.seconds, 1),
      tokens_per_second: Math.round(t.tokensPerSecond),
      parameters: result.network.parameterCount,
      vocabulary: result.tokenizer.size,
      weights_bytes: result.weights.length,
      backend: backend.backend,
      verdict_head: result.parsed.verdict ? headSummary(result.parsed.verdict) : null,
      next: `--llm learned:${o.out}`,
    };
    result.network.dispose();
    if (o.json) {
      if (summary.pairs) process.stderr.write(`data: ${summary.pairs}\n`);
      printJsonLast(summary);
      return;
    }
    if (summary.pairs) console.log(`data: ${summary.pairs}`);
    console.log(
      `trained ${summary.name} on ${t.data.trainPairs} pairs (${t.data.trainEpisodes} episodes; ${t.data.validationPairs} validation pairs) in ${summary.seconds} s: ` +
        `best validation loss ${summary.best_validation_loss} at epoch ${summary.best_epoch}; ${summary.parameters} parameters, ${(summary.weights_bytes / 1e6).toFixed(1)} MB; ` +
        `${result.parsed.verdict ? describeHead(result.parsed.verdict) : 'no verdict head (the generator judges endings)'}. Dream with ${summary.next}`,
    );
  } finally {
    await source.close();
  }
}

export async function runExpmodelVerdict(args: ParsedArgs): Promise<void> {
  const o = args.options as SourceValues & {
    model?: string;
    remove?: boolean;
    json?: boolean;
  };
  const spec = expmodelVerdictCommand;
  if (!o.model) throw new UsageError(`'${spec.name}' needs --model DIR (a trained model's folder).`, spec);
  // A head this version cannot read is replaced anyway (the load error names this command as the fix).
  const { manifest, weights } = await readModelFolder(o.model, { dropStaleVerdict: true });
  let head: VerdictHead | null = null;
  let examples = 0;
  if (!o.remove) {
    const source = await openSource(o, spec);
    try {
      if (source.env !== manifest.env)
        throw new UsageError(
          `The model in ${o.model} is of '${manifest.env}', not '${source.env}': name its own env or domain.`,
          spec,
        );
      // The split the model was trained on (its seed, the default validation share), as training fits it.
      const { episodes, tasks } = await realEpisodes(source.buffer, source.env);
      const split = splitByTask(episodes, tasks, learnedTrainOptions().validationShare, manifest.training.seed);
      examples = split.train.reduce((n, e) => n + e.steps.length, 0);
      head = fitHeadFor(source.card, split.train, manifest.formatOptions.historyLength, {
        seed: manifest.training.seed,
      });
    } finally {
      await source.close();
    }
  }
  // Re-encoded in place: the same weights give the same weights.bin, and the other fields keep their order.
  const { format: _format, weights: _entries, weightsFile: _file, verdict: _old, ...base } = manifest;
  writeModelFolder(o.model, encodeModelFiles({ ...base, ...(head ? { verdict: head } : {}) }, weights));
  const summary = {
    model: o.model,
    env: manifest.env,
    steps: examples,
    head: head ? headSummary(head) : null,
  };
  if (o.json) {
    printJsonLast(summary);
    return;
  }
  if (o.remove) console.log(`removed the verdict head of ${o.model}: the generator's reward stands`);
  else if (!head)
    console.log(
      `no verdict head for ${o.model}: of ${examples} real steps, fewer than ${MIN_VERDICT_EXAMPLES} end with success, or fewer than ${MIN_VERDICT_EXAMPLES} fail (ended or goal-like and not ended), so the generator's reward stands`,
    );
  else console.log(`fitted the verdict head of ${o.model}: ${describeHead(head)}`);
}

export async function runExpmodelExport(args: ParsedArgs): Promise<void> {
  const o = args.options as SourceValues & {
    out?: string;
    json?: boolean;
  };
  const spec = expmodelExportCommand;
  if (!o.out) throw new UsageError(`'${spec.name}' needs --out FILE.jsonl.`, spec);
  checkCounts(o, spec);
  const source = await openSource(o, spec);
  try {
    const { episodes, tasks } = await realEpisodes(source.buffer, source.env);
    const split = splitByTask(episodes, tasks, 0, o.seed);
    const text = await trlMessagesJsonl(split.train, source.card, bufferRetriever(source.buffer), o.k);
    writeFileSync(o.out, text);
    const lines = text ? text.trimEnd().split('\n').length : 0;
    const summary = {
      out: o.out,
      env: source.env,
      episodes: split.train.length,
      held_out_dropped: split.heldOutDropped,
      records: lines,
      k: o.k,
      format: 'trl messages',
    };
    if (o.json) {
      printJsonLast(summary);
      return;
    }
    console.log(
      `wrote ${lines} TRL messages records from ${split.train.length} episodes of ${source.env} to ${o.out} (the reasoning model's prompt without reasoning, k=${o.k})`,
    );
  } finally {
    await source.close();
  }
}
