/**
 * `dreamgym domain import|train`: bring-your-own domain. An application with no real environment
 * is imported from demonstrated episodes (ours, AgentGym, ETO or TRL) plus optional task
 * descriptions; its card is derived from the data; training runs in the dream only; evaluation is
 * (a) dream success on held-out tasks, (b) action agreement with held-out demonstrations and
 * (c) the audit against held-out recorded transitions. The oracle does not exist for such a
 * domain (it is a real environment with dialled errors).
 *
 * The experience model comes from the one run builder with the domain handed in (an LLM behind an
 * OpenAI-compatible server, key from DREAMGYM_API_KEY else OPENAI_API_KEY, or a learned model).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ReplayBuffer } from '../../core/buffer/buffer';
import { MemoryBufferStore } from '../../core/buffer/stores/memory';
import { READ_FORMATS, assertReadFormat, readTrajectoriesAs } from '../../core/data/formats';
import {
  buildDomain,
  domainSummary,
  parseTaskDescriptions,
  trainingTasks,
  UNRECORDED_OUTCOMES,
  type Domain,
  type UnrecordedOutcome,
} from '../../core/domain/domain';
import {
  DEFAULT_DOMAIN_DIR,
  domainPath,
  openDomainFolder,
  saveDomainFolder,
  SAVE_POINTS,
  type SavePoint,
} from '../../node/domain-folder';
import { nextCommandLines } from '../../core/domain/commands';
import {
  DEFAULT_DOMAIN_TRAIN_CONFIG,
  DOMAIN_AGENT_STARTS,
  type DomainAgentStart,
  type DomainTrainConfig,
} from '../../core/domain/config';
import type { DomainEvaluation } from '../../core/domain/evaluate';
import type { DomainHealth, VerdictFit } from '../../core/domain/health';
import { MANIFEST_FILE, type ModelManifest } from '../../core/experience/learned/model-file';
import { FolderCheckpointStore } from '../../node/checkpoint-folder';
import { outcomeCoverage, outcomeLine, outcomeWarnings } from '../../core/domain/outcomes';
import { trainDomain, type DomainTrainResult } from '../../core/domain/trainer';
import { envIds } from '../../core/envs/registry';
import { EVAL_SPLITS, type EvalSplit } from '../../core/train/evaluate';
import { formatLlmSpec } from '../../core/llm/spec';
import { ConfigError } from '../../core/train/config';
import { buildRunParts, checkDomainEngine } from '../../core/train/run-parts';
import { nodeEngineDeps } from '../../node/edge';
import { initBackend } from '../../core/tfjs/backend';
import { UsageError, type CommandSpec, type ParsedArgs } from '../args';
import { BACKEND_OPTION, jsonOption } from '../common-options';
import { printJsonLast, progressBar, round, terminalSafe } from '../output';
import { checkModelSettings, experienceModelOptions, llmSettingsOption, parseLlmOption } from '../experience-options';
import { DREAM_SUCCESS } from '../../core/train/metrics';

const dirOption = {
  type: 'string' as const,
  description: 'folder of imported domains (the domain goes to DIR/NAME)',
  default: DEFAULT_DOMAIN_DIR,
};
const nameOption = {
  type: 'string' as const,
  description: "the domain's name (letters, digits, - and _); its env id is byo:NAME",
};

export const domainImportCommand: CommandSpec = {
  name: 'domain import',
  summary:
    "import an application's trajectories as a domain (no real env): validate, derive the card, split, seed the buffer",
  usage:
    'dreamgym domain import FILE --name N [--format auto|ours|agentgym|eto|trl] [--tasks TASKS.txt] [--held-out SHARE] ' +
    '[--unrecorded-outcome unknown|success] [--seed S] [--dir D] [--replace] [--json]',
  positionals: ['file'],
  options: {
    name: nameOption,
    format: {
      type: 'string',
      description: "file format (auto: the one the first record's fields say)",
      choices: READ_FORMATS,
      default: 'auto',
    },
    tasks: { type: 'string', description: 'extra task descriptions, one a line (# comments and blank lines skipped)' },
    'held-out': {
      type: 'number',
      description: 'share of episodes held out for evaluation',
      default: 0.2,
      min: 0,
      max: 1,
    },
    'unrecorded-outcome': {
      type: 'string',
      description:
        'how episodes without a recorded outcome ended (AgentGym has no reward): unknown, ' +
        'or success when every one reached its goal',
      choices: UNRECORDED_OUTCOMES,
      default: 'unknown',
    },
    seed: { type: 'integer', description: 'seed of the train/held-out split', default: 0 },
    dir: dirOption,
    replace: {
      type: 'boolean',
      description: 'replace an existing domain of that name (built beside it, swapped in by one rename; runs/ stay)',
    },
    json: jsonOption('the result'),
  },
};

export const domainTrainCommand: CommandSpec = {
  name: 'domain train',
  summary:
    'train an agent of an imported domain (behaviour cloning, then the dream), ' +
    'then evaluate: dream success, action agreement, audit',
  usage:
    'dreamgym domain train --name N --llm openai:BASE_URL#MODEL|learned:PATH ' +
    '[--agent bc-then-dream|bc|dream] [--bc-epochs E] ' +
    '[--iterations K] [--tasks-per-iteration T] [--group-size G] [--step-limit L] ' +
    '[--eval-episodes E] [--audit-n A] [--real-env ENV [--real-episodes N] [--difficulty D] [--split dev|test]] ' +
    '[--seed S] [--k K] [--history H] ' +
    '[--no-reasoning] [--dir D] [--json]; exits 3 when the model failed its health checks',
  options: {
    name: nameOption,
    llm: {
      type: 'string',
      description:
        'experience model: openai:BASE_URL#MODEL or learned:PATH (the oracle needs a real env; imported domains have none)',
    },
    iterations: {
      type: 'integer',
      description: 'training iterations',
      default: DEFAULT_DOMAIN_TRAIN_CONFIG.iterations,
      min: 1,
      max: 1_000_000,
    },
    'tasks-per-iteration': {
      type: 'integer',
      description: 'training tasks per iteration',
      default: DEFAULT_DOMAIN_TRAIN_CONFIG.tasksPerIteration,
      min: 1,
      max: 4096,
    },
    'group-size': {
      type: 'integer',
      description: 'dreamed episodes per task (a GRPO group)',
      default: DEFAULT_DOMAIN_TRAIN_CONFIG.groupSize,
      min: 1,
      max: 256,
    },
    agent: {
      type: 'string',
      description:
        'what is trained: behaviour cloning on the training episodes then the dream (default), bc only, or the dream only',
      choices: DOMAIN_AGENT_STARTS,
      default: DEFAULT_DOMAIN_TRAIN_CONFIG.agent,
    },
    'kl-coef': {
      type: 'number',
      description: "KL to the cloned policy in the dream's GRPO (with --agent bc-then-dream; 0 = none)",
      default: DEFAULT_DOMAIN_TRAIN_CONFIG.klCoef,
      min: 0,
      max: 100,
    },
    'bc-epochs': {
      type: 'integer',
      description: 'passes of behaviour cloning over the demonstrated steps',
      default: DEFAULT_DOMAIN_TRAIN_CONFIG.bcEpochs,
      min: 1,
      max: 10_000,
    },
    'step-limit': {
      type: 'integer',
      description: 'steps per dreamed episode (default: the longest demonstrated episode, 5..50)',
      min: 1,
      max: 1000,
    },
    'eval-episodes': {
      type: 'integer',
      description: 'held-out tasks played in the dream for (a)',
      default: DEFAULT_DOMAIN_TRAIN_CONFIG.evalEpisodes,
      min: 1,
      max: 100_000,
    },
    'audit-n': {
      type: 'integer',
      description: 'held-out transitions audited for (c)',
      default: DEFAULT_DOMAIN_TRAIN_CONFIG.auditTransitions,
      min: 1,
      max: 100_000,
    },
    'real-env': {
      type: 'string',
      description:
        'a registered env the episodes were recorded in (an export of ours): also play its held-out real tasks',
    },
    'real-episodes': { type: 'integer', description: 'held-out real tasks (with --real-env)', default: 100, min: 1 },
    split: {
      type: 'string',
      description: 'held-out split of the real tasks (with --real-env): dev, or test for reported figures',
      choices: EVAL_SPLITS,
      default: 'dev',
    },
    difficulty: {
      type: 'number',
      description: 'task difficulty of the real tasks (with --real-env)',
      default: 0.5,
      min: 0,
      max: 1,
    },
    seed: { type: 'integer', description: 'seed of everything random in the run', default: 0 },
    ...experienceModelOptions,
    dir: dirOption,
    out: { type: 'string', description: 'run folder (default DIR/NAME/runs/seed-S)' },
    backend: BACKEND_OPTION,
    json: jsonOption('the result'),
  },
};

function requireName(name: string | undefined, spec: CommandSpec): string {
  if (!name) throw new UsageError(`'${spec.name}' needs --name (the domain's name, e.g. --name myapp).`, spec);
  return name;
}

export async function runDomainImport(args: ParsedArgs): Promise<void> {
  const o = args.options as {
    name?: string;
    format: string;
    tasks?: string;
    'held-out': number;
    'unrecorded-outcome': UnrecordedOutcome;
    seed: number;
    dir: string;
    replace?: boolean;
    json?: boolean;
  };
  const name = requireName(o.name, domainImportCommand);
  const file = args.positionals[0];
  const requested = assertReadFormat(o.format);
  const { format, trajectories } = readTrajectoriesAs(readFileSync(file, 'utf8'), requested, {
    sourceName: file,
    defaultEnv: name,
  });
  const extra = o.tasks ? parseTaskDescriptions(readFileSync(o.tasks, 'utf8')) : [];
  const domain = buildDomain(name, trajectories, {
    tasks: extra,
    heldOutShare: o['held-out'],
    seed: o.seed,
    unrecordedOutcome: o['unrecorded-outcome'],
  });
  const saved = await saveDomainFolder(domain, o.dir, {
    createdAt: Date.now(),
    replace: o.replace,
    source: { file, format },
    ...killHook(),
  });
  const s = domain.stats;
  const outcomes = outcomeCoverage([...domain.train, ...domain.heldOut], s.assumedSuccesses);
  const summary = {
    name: domain.name,
    env: domain.envId,
    path: saved.path,
    file,
    format,
    episodes: s.episodes,
    train_episodes: s.trainEpisodes,
    held_out_episodes: s.heldOutEpisodes,
    split_by: s.splitBy,
    steps: s.steps,
    tasks: domain.tasks.length,
    held_out_tasks: domain.heldOutTaskIds.length,
    extra_tasks: s.extraTasks,
    distinct_actions: s.distinctActions,
    steps_with_admissible: s.stepsWithAdmissible,
    inferred_admissible_steps: s.inferredAdmissibleSteps,
    assumed_successes: s.assumedSuccesses,
    success_rate: round(s.successRate),
    mean_length: round(s.meanLength, 2),
    outcomes,
    action_kinds: s.actionKinds.slice(0, 8).map((k) => ({ kind: k.kind, count: k.count })),
    buffer: { episodes: saved.buffer.episodes, transitions: saved.buffer.transitions },
    kept: saved.keptEntries,
    card: domain.card.text,
    warnings: [...domain.warnings, ...outcomeWarnings(outcomes)],
    next: nextCommands(domain.name, o.dir),
  };
  if (o.json) {
    printJsonLast(summary);
    return;
  }
  console.log(`read ${terminalSafe(file)} as ${format}${requested === 'auto' ? ' (detected from its records)' : ''}`);
  console.log(terminalSafe(domainSummary(domain), { keepLines: true }));
  console.log(`  endings    ${outcomeLine(outcomes)}`);
  for (const warning of outcomeWarnings(outcomes)) console.log(`  warning    ${warning}`);
  console.log(
    `saved to ${saved.data} (card.json, train.jsonl, held-out.jsonl, ` +
      `buffer/ with ${saved.buffer.transitions} transitions)`,
  );
  if (saved.keptEntries.length > 0)
    console.log(`kept from the domain it replaced: ${saved.keptEntries.map((e) => terminalSafe(e)).join(', ')}`);
  console.log(`next: ${summary.next[0]}`);
  console.log(`then: ${summary.next[1]}`);
}

/**
 * The kill trial's hook (scripts/measure/domain-replace-kill-trials.ts): DREAMGYM_TEST_KILL_AT=POINT kills
 * this process with SIGKILL at that point of the save, as a crash or `kill -9` would.
 */
function killHook(): { at?: (point: SavePoint) => void } {
  const point = process.env.DREAMGYM_TEST_KILL_AT;
  if (!point || !(SAVE_POINTS as readonly string[]).includes(point)) return {};
  return {
    at: (reached) => {
      if (reached === point) process.kill(process.pid, 'SIGKILL');
    },
  };
}

/** What to run after an import: train the domain's learned experience model, then dream with it. */
export function nextCommands(name: string, dir: string): [string, string] {
  return nextCommandLines(name, dir === DEFAULT_DOMAIN_DIR ? '' : ` --dir ${dir}`);
}

/**
 * The domain's saved buffer, copied into memory and closed (dreamed transitions of this run stay
 * out of the saved one). The folder store hands out embeddings as views of one shared array, and
 * the memory store clones each record whole: a view would clone the shared array once per
 * transition (a 1,000-episode domain ran out of 24 GB), so each embedding is copied to an array of
 * its own.
 */
async function runBuffer(saved: ReplayBuffer): Promise<ReplayBuffer> {
  try {
    const memory = new ReplayBuffer(new MemoryBufferStore(), saved.embedder);
    const transitions = (await saved.store.listTransitions()).map((t) =>
      t.embedding ? { ...t, embedding: new Float32Array(t.embedding) } : t,
    );
    await memory.add(transitions, await saved.store.listEpisodes());
    return memory;
  } finally {
    await saved.store.close();
  }
}

export async function runDomainTrain(args: ParsedArgs): Promise<number> {
  const o = args.options as {
    name?: string;
    llm?: string;
    agent: DomainAgentStart;
    'bc-epochs': number;
    'kl-coef': number;
    iterations: number;
    'tasks-per-iteration': number;
    'group-size': number;
    'step-limit'?: number;
    'eval-episodes': number;
    'audit-n': number;
    'real-env'?: string;
    'real-episodes': number;
    split: EvalSplit;
    difficulty: number;
    seed: number;
    k: number;
    history: number;
    'no-reasoning'?: boolean;
    set?: string;
    dir: string;
    out?: string;
    backend: 'wasm' | 'cpu';
    json?: boolean;
  };
  const name = requireName(o.name, domainTrainCommand);
  const llm = parseLlmOption(o.llm, domainTrainCommand);
  try {
    checkDomainEngine(llm, { name });
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message, domainTrainCommand);
    throw error;
  }
  checkModelSettings(o, domainTrainCommand);
  const { llmTimeoutMs, llmRetries, llmConcurrency, llmMaxFailures } = llmSettingsOption(o.set, domainTrainCommand);
  const config = {
    llm: formatLlmSpec(llm),
    agent: o.agent,
    bcEpochs: o['bc-epochs'],
    klCoef: o['kl-coef'],
    iterations: o.iterations,
    tasksPerIteration: o['tasks-per-iteration'],
    groupSize: o['group-size'],
    seed: o.seed,
    evalEpisodes: o['eval-episodes'],
    auditTransitions: o['audit-n'],
    ...(o['step-limit'] !== undefined ? { stepLimit: o['step-limit'] } : {}),
    ...(o['real-env'] !== undefined
      ? { realEval: { env: o['real-env'], episodes: o['real-episodes'], difficulty: o.difficulty, split: o.split } }
      : {}),
    llmMaxFailures,
  };
  if (o['real-env'] !== undefined && !envIds().includes(o['real-env'])) {
    throw new UsageError(
      `--real-env '${o['real-env']}' is not a registered env (${envIds().join(', ')}): give it only when the ` +
        'domain was recorded in one of these (an export through dreamgym convert).',
      domainTrainCommand,
    );
  }
  for (const [option, value, min] of [
    ['iterations', config.iterations, 1],
    ['tasks-per-iteration', config.tasksPerIteration, 1],
    ['group-size', config.groupSize, 1],
    ['eval-episodes', config.evalEpisodes, 0],
    ['audit-n', config.auditTransitions, 0],
    ['step-limit', config.stepLimit ?? 1, 1],
  ] as const) {
    if (!(value >= min)) throw new UsageError(`--${option} must be at least ${min}, got ${value}.`, domainTrainCommand);
  }
  const saved = await openDomainFolder(o.dir, name); // both from one data folder
  const domain = saved.domain;
  const buffer = await runBuffer(saved.buffer);
  const parts = await buildRunParts(
    {
      env: domain.envId,
      llm: config.llm,
      seed: o.seed,
      retrievalK: o.k,
      historyLength: o.history,
      reasoning: !o['no-reasoning'],
      llmTimeoutMs,
      llmRetries,
      llmConcurrency,
    },
    { ...nodeEngineDeps(), domain, buffer },
  );
  const model = parts.experienceModel!; // a dreaming config always gets one
  const backend = await initBackend(o.backend);
  process.stderr.write(`backend: ${backend.reason}\n`);

  const out = o.out ?? join(domainPath(o.dir, name), 'runs', `seed-${o.seed}`);
  mkdirSync(out, { recursive: true });
  const metricsPath = join(out, 'metrics.jsonl');
  writeFileSync(metricsPath, '');
  const started = performance.now();
  const bar = progressBar(`domain train ${name}`);
  const verdict = llm.kind === 'learned' ? learnedVerdictFit(llm.path) : null;
  const result = await trainDomain(domain, model, config, {
    buffer,
    featureSchema: parts.featureSchema,
    now: () => Date.now(),
    verdict,
    onBcEpoch: (r) =>
      process.stderr.write(
        `behaviour cloning epoch ${r.epoch}/${config.bcEpochs}: loss ${r.loss.toFixed(4)}, ` +
          `training-state agreement ${r.accuracy.toFixed(3)}\n`,
      ),
    onIteration: (record) => {
      appendFileSync(
        metricsPath,
        JSON.stringify({
          iteration: record.iteration,
          ...Object.fromEntries(
            Object.entries(record.metrics).map(([k, v]) => [k, Number.isFinite(v) ? round(v, 6) : null]),
          ),
        }) + '\n',
      );
      bar.update(
        record.iteration,
        config.iterations,
        `dream-judged success ${(record.metrics[DREAM_SUCCESS] ?? 0).toFixed(2)} invalid ${(record.metrics['dream/invalid_rate'] ?? 0).toFixed(2)}`,
      );
    },
  });
  bar.end();
  await saveDomainAgent(out, domain, o.dir, result, config);
  const last = result.iterations[result.iterations.length - 1]?.metrics ?? {};
  const { dream, agreement, audit, real } = result.evaluation;
  const { health } = result;
  const summary = {
    // 'failed': the experience model failed a health check (problems say which, and the fix); never a success.
    status: health.status,
    problems: health.problems.map((p) => ({ kind: p.kind, severity: p.severity, message: p.message })),
    name: domain.name,
    env: domain.envId,
    llm: config.llm,
    experience_model: model.label,
    mode: 'dream',
    // What was trained, which checkpoint the run returns (its checkpoint/, for dreamgym act --run), and why.
    agent: {
      trained: result.agent.trained,
      returned: result.agent.returned,
      reason: result.agent.reason,
      dream_iterations: result.agent.dreamIterations,
      stopped_at: result.agent.stoppedAt,
      checkpoint: join(out, 'checkpoint'),
    },
    bc: result.bc && {
      demonstrations: result.bc.demonstrations,
      episodes: result.bc.episodes,
      examples: result.bc.examples,
      epochs: result.bc.epochs.length,
      final_loss: round(result.bc.epochs[result.bc.epochs.length - 1]?.loss ?? NaN),
      training_agreement_before: round(result.bc.accuracyBefore),
      training_agreement: round(result.bc.accuracy),
    },
    verdict_head: verdict && {
      successes: verdict.successes,
      failures: verdict.failures,
      balanced_accuracy: round(verdict.balancedAccuracy),
    },
    oracle: false,
    iterations: result.iterations.length,
    dream_steps: result.dreamSteps,
    real_steps: 0,
    step_limit: result.stepLimit,
    train_tasks: trainingTasks(domain).length,
    held_out_tasks: domain.heldOutTaskIds.length,
    final_dream_success: round(last[DREAM_SUCCESS] ?? 0),
    invalid_rate: round(last['dream/invalid_rate'] ?? 0),
    candidates: domain.stats.inferredAdmissibleSteps > 0 ? 'inferred' : 'recorded',
    inferred_admissible_steps: domain.stats.inferredAdmissibleSteps,
    eval: { dream_success: dream, action_agreement: agreement, audit, ...(real ? { real } : {}) },
    wall_seconds: round((performance.now() - started) / 1000, 1),
    backend: backend.backend,
    out,
  };
  writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  reportHealth(health, model.label);
  const code = health.status === 'failed' ? FAILED_MODEL_EXIT : 0;
  if (o.json) {
    printJsonLast(summary);
    return code;
  }
  printTrainSummary(summary, result.evaluation, o['step-limit'] === undefined);
  return code;
}

/** The exit status of a run whose experience model failed its health checks (1: error, 2: usage). */
export const FAILED_MODEL_EXIT = 3;

/** Each problem on stderr; a failed model first, in one line that says so. */
function reportHealth(health: DomainHealth, label: string): void {
  if (health.status === 'failed') {
    process.stderr.write(
      `error: FAILED: the experience model ${terminalSafe(label)} cannot be trusted on this domain; ` +
        'its dream success is no success. Why, and the fix:\n',
    );
  }
  for (const p of health.problems)
    process.stderr.write(`${p.severity === 'failed' ? 'error' : 'warning'}: ${p.message}\n`);
}

/** The learned model's verdict head fit (its model.json), or null where it has none or the folder is unreadable. */
function learnedVerdictFit(path: string): VerdictFit | null {
  try {
    const manifest = JSON.parse(readFileSync(join(path, MANIFEST_FILE), 'utf8')) as Partial<ModelManifest>;
    return manifest.verdict?.fittedOn ?? null;
  } catch {
    return null; // the engine's own load reports a bad folder; no head is judged here
  }
}

/** The file of a domain run that names its domain (`dreamgym act --run` infers candidates from its episodes). */
export const DOMAIN_AGENT_FILE = 'domain-agent.json';

export interface DomainAgentRecord {
  format: 'dreamgym-domain-agent/1';
  /** The domain and the folder of domains it was read from (absolute). */
  domain: string;
  dir: string;
  stepLimit: number;
  seed: number;
  trained: string;
  returned: 'bc' | 'dream';
  reason: string;
}

/** The returned policy as the run's checkpoint, and the domain it belongs to. */
async function saveDomainAgent(
  out: string,
  domain: Domain,
  dir: string,
  result: DomainTrainResult,
  trained: Pick<DomainTrainConfig, 'seed'>,
): Promise<void> {
  const { seed } = trained;
  await new FolderCheckpointStore(join(out, 'checkpoint')).save(result.checkpoint);
  const record: DomainAgentRecord = {
    format: 'dreamgym-domain-agent/1',
    domain: domain.name,
    dir: resolve(dir),
    stepLimit: result.stepLimit,
    seed,
    trained: result.agent.trained,
    returned: result.agent.returned,
    reason: result.agent.reason,
  };
  writeFileSync(join(out, DOMAIN_AGENT_FILE), JSON.stringify(record, null, 2) + '\n');
}

/** The domain a run folder's agent belongs to (null: not a domain run). */
export function readDomainAgent(run: string): DomainAgentRecord | null {
  const path = join(run, DOMAIN_AGENT_FILE);
  if (!existsSync(path)) return null;
  const record = JSON.parse(readFileSync(path, 'utf8')) as Partial<DomainAgentRecord>;
  if (
    record.format !== 'dreamgym-domain-agent/1' ||
    typeof record.domain !== 'string' ||
    typeof record.dir !== 'string'
  )
    throw new Error(`${path} is not a domain agent record (format dreamgym-domain-agent/1): train the run again.`);
  return record as DomainAgentRecord;
}

type TrainSummary = {
  status: string;
  agent: { trained: string; returned: string; reason: string; checkpoint: string };
  bc: {
    demonstrations: string;
    episodes: number;
    examples: number;
    epochs: number;
    training_agreement_before: number;
    training_agreement: number;
  } | null;
  name: string;
  experience_model: string;
  env: string;
  iterations: number;
  dream_steps: number;
  step_limit: number;
  candidates: string;
  out: string;
};

function printTrainSummary(summary: TrainSummary, evaluation: DomainEvaluation, stepLimitFromData: boolean): void {
  const { dream, agreement, audit, real } = evaluation;
  const show = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));
  const failed = summary.status === 'failed' ? 'FAILED (see the errors above): ' : '';
  const { agent, bc } = summary;
  console.log(
    `${failed}${summary.name} (${summary.env}): ${agent.trained} with ${terminalSafe(summary.experience_model)}: ` +
      `${summary.iterations} dream iterations, ${summary.dream_steps} dreamed steps, 0 real`,
  );
  if (bc) {
    const which = bc.demonstrations === 'successes' ? 'successful training episodes' : 'training episodes';
    console.log(
      `  behaviour cloning: ${bc.examples} demonstrated steps of ${bc.episodes} ${which}, ${bc.epochs} epochs; ` +
        `agreement on them ${bc.training_agreement_before} → ${bc.training_agreement}`,
    );
  }
  console.log(
    `  returned: the ${agent.returned === 'bc' ? 'behaviour-cloning' : 'dream-trained'} policy, ` +
      `because ${agent.reason}`,
  );
  console.log(`  checkpoint: ${agent.checkpoint} (use it: npm run dreamgym -- act --run ${summary.out})`);
  console.log(
    `  (a) dream success on ${dream.episodes} held-out tasks   ${show(dream.success_rate)} (mean length ` +
      `${show(dream.mean_length)}, first-step ends ${show(dream.first_step_share)}, ` +
      `invalid answers ${dream.invalid_rate})`,
  );
  console.log(
    `  (b) action agreement                       ${show(agreement.agreement)} on ${agreement.usable_steps} of ` +
      `${agreement.held_out_steps} held-out steps, candidates ${summary.candidates} (chance ${show(agreement.chance)})`,
  );
  console.log(
    `  (c) audit on ${audit.n} held-out transitions   valid ${show(audit.valid_agreement)}, reward ` +
      `${show(audit.reward_accuracy)} (${audit.outcome_steps} outcome steps), ` +
      `terminated ${show(audit.terminated_accuracy)}, observation F1 ${show(audit.observation_f1)}, ` +
      `admissible Jaccard ${show(audit.admissible_jaccard)}, invalid ${audit.invalid_rate}`,
  );
  if (real) {
    console.log(
      `  (d) real held-out success in ${real.env}  ${show(real.success_rate)} ` +
        `on ${real.episodes} ${real.split} tasks ` +
        `(difficulty ${real.difficulty}, mean steps ${show(real.mean_steps)})`,
    );
  }
  console.log(
    `  step limit ${summary.step_limit}` +
      `${stepLimitFromData ? ' (from the longest demonstrated episode, within 5..50)' : ''}; ` +
      `run in ${summary.out}`,
  );
}
