/**
 * Bring-your-own domain (the issue "import a JSONL of trajectories plus task descriptions from
 * any application"): an application with no real environment, known only from demonstrated
 * episodes. `buildDomain` checks that the data can carry a domain, relabels the episodes under
 * the domain's env id `byo:<name>`, splits them (seeded, deterministic) into training episodes —
 * the experience model's card and replay buffer are built from these — and held-out episodes
 * for evaluation, and collects the tasks the dream trains on.
 *
 * The split is by task: episodes that share an instruction land on the same side, so a held-out
 * task was never demonstrated in training (when every episode has the same instruction, the
 * episodes themselves are split). Every random choice comes from `Rng` (never the unseeded global generator).
 *
 * Validation gathers every problem before failing (`DomainError.problems`), each with what is
 * wrong, what was found and how to fix it: too few episodes, several environments in one file,
 * episodes without actions, missing instructions, observations that are all empty, and an
 * action vocabulary too small (nothing to choose) or too large (nothing repeats) to learn from.
 */
import { deriveDomainCard, domainStats, collapse, type DerivedStats, type DomainCard } from '../experience/domain-card';
import { hashString, Rng } from '../rng';
import type { Task, Trajectory } from '../types';
import { INFERRED_CANDIDATES, withInferredCandidates } from '../data/candidates';
import { DreamGymError } from '../errors';

/** Fewest episodes a domain is built from (some to train on, some held out). */
export const MIN_DOMAIN_EPISODES = 10;
/** Fewest distinct actions: with one, a policy has nothing to choose. */
export const MIN_DISTINCT_ACTIONS = 2;
/** Most distinct actions over the whole file. */
export const MAX_DISTINCT_ACTIONS = 5000;
/** Largest share of distinct actions among all steps (above it almost nothing repeats: free text). */
export const MAX_UNIQUE_ACTION_SHARE = 0.9;
/** The share test applies from this many steps on (tiny files repeat little by chance). */
const UNIQUE_SHARE_MIN_STEPS = 20;

export const DOMAIN_ENV_PREFIX = 'byo:';
const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

export type DomainProblemCode =
  | 'bad-name'
  | 'bad-option'
  | 'too-few-episodes'
  | 'mixed-envs'
  | 'no-actions'
  | 'missing-instructions'
  | 'empty-observations'
  | 'vocabulary-too-small'
  | 'vocabulary-too-large';

export interface DomainProblem {
  code: DomainProblemCode;
  /** What is wrong, what was found, and the fix. */
  message: string;
}

/** The data cannot carry a domain; `problems` lists every reason (the message shows them all). */
export class DomainError extends DreamGymError {
  constructor(
    readonly domain: string,
    readonly problems: DomainProblem[],
  ) {
    super(
      `Cannot build the domain '${domain}': ${problems.length} problem${problems.length === 1 ? '' : 's'} found.\n` +
        problems.map((p) => `  - ${p.message}`).join('\n'),
      { code: 'domain-invalid', fix: 'Correct each problem listed in the data, then import the domain again.' },
    );
    this.name = 'DomainError';
  }

  has(code: DomainProblemCode): boolean {
    return this.problems.some((p) => p.code === code);
  }
}

export interface DomainStats extends DerivedStats {
  /** Distinct action strings over all episodes. */
  distinctActions: number;
  /** Steps whose observation lists the admissible actions (the policy's candidates, action agreement). */
  stepsWithAdmissible: number;
  /** Steps that listed none and were given candidates inferred from the data (candidates.ts). */
  inferredAdmissibleSteps: number;
  /** Episodes without a recorded outcome that the import was told ended in success (`unrecordedOutcome`). */
  assumedSuccesses: number;
  /** Distinct task instructions of the episodes. */
  instructions: number;
  /** Extra task descriptions given besides the episodes' (no demonstrations). */
  extraTasks: number;
  trainEpisodes: number;
  heldOutEpisodes: number;
  /** How the held-out set was chosen: whole tasks, or episodes when all share one instruction. */
  splitBy: 'instruction' | 'episode';
  /** Longest demonstrated episode (steps). */
  maxLength: number;
}

export interface Domain {
  name: string;
  /** 'byo:<name>': the env id of every task, episode and buffer record of the domain. */
  envId: string;
  /** Derived from the training episodes (the held-out ones stay unseen by the model). */
  card: DomainCard;
  /** Training episodes: the replay buffer's seed and the dream's start states. */
  train: Trajectory[];
  /** Held-out episodes: action agreement and the audit compare against them. */
  heldOut: Trajectory[];
  /** Every task (origin 'imported'): the episodes' instructions, then the extra descriptions. */
  tasks: Task[];
  /** Tasks of the held-out episodes (never trained on, unless the split had to be by episode). */
  heldOutTaskIds: string[];
  stats: DomainStats;
  /** Things that work but limit what can be measured (e.g. no admissible lists). */
  warnings: string[];
  /** The split's seed and share (rebuilding with them gives the same split). */
  seed: number;
  heldOutShare: number;
}

export interface BuildDomainOptions {
  /** Extra task descriptions (no demonstrations): the dream trains on them too. */
  tasks?: readonly string[];
  /** Share of episodes held out for evaluation (default 0.2). */
  heldOutShare?: number;
  /** Seed of the split (default 0). */
  seed?: number;
  /** Fewest episodes accepted (default MIN_DOMAIN_EPISODES; lower it only in tests of tiny domains). */
  minEpisodes?: number;
  /**
   * What an episode without a recorded outcome (AgentGym has no reward field) ended in: 'unknown'
   * (default: its last step teaches no verdict) or 'success' (the user says every such episode
   * reached its goal, as AgentGym's AgentTraj sets, filtered to successes, do).
   */
  unrecordedOutcome?: UnrecordedOutcome;
}

export const UNRECORDED_OUTCOMES = ['unknown', 'success'] as const;
export type UnrecordedOutcome = (typeof UNRECORDED_OUTCOMES)[number];

export function domainEnvId(name: string): string {
  return `${DOMAIN_ENV_PREFIX}${name}`;
}

/**
 * The tasks the dream trains on: those of the training episodes and the extra descriptions (a
 * task of held-out episodes only is never trained on).
 */
export function trainingTasks(domain: Domain): Task[] {
  const trained = new Set(domain.train.map((t) => t.task.id));
  const held = new Set(domain.heldOutTaskIds);
  return domain.tasks.filter((t) => trained.has(t.id) || !held.has(t.id));
}

export function heldOutTasks(domain: Domain): Task[] {
  const held = new Set(domain.heldOutTaskIds);
  return domain.tasks.filter((t) => held.has(t.id));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function listIds(ids: readonly string[], max = 5): string {
  return (
    ids
      .slice(0, max)
      .map((id) => `'${id}'`)
      .join(', ') + (ids.length > max ? `, … (${ids.length - max} more)` : '')
  );
}

/** Every problem that keeps `trajectories` from being a domain (empty: they can carry one). */
export function validateDomainData(
  name: string,
  trajectories: readonly Trajectory[],
  options: BuildDomainOptions = {},
): DomainProblem[] {
  const problems: DomainProblem[] = [];
  const minEpisodes = options.minEpisodes ?? MIN_DOMAIN_EPISODES;
  if (!NAME_PATTERN.test(name)) {
    problems.push({
      code: 'bad-name',
      message: `The name '${name}' cannot name a domain: use 1–64 letters, digits, '-' or '_', starting with a letter or digit (e.g. --name myapp).`,
    });
  }
  const share = options.heldOutShare ?? 0.2;
  if (!(share > 0 && share < 1)) {
    problems.push({
      code: 'bad-option',
      message: `The held-out share must be between 0 and 1 (exclusive), got ${share}: evaluation needs held-out episodes and training needs the rest.`,
    });
  }
  if (trajectories.length < minEpisodes) {
    problems.push({
      code: 'too-few-episodes',
      message:
        `Too few episodes: found ${trajectories.length}, a domain needs at least ${minEpisodes} (most to train the experience model's examples on, ` +
        `some held out to evaluate). Add more demonstrated episodes of the application to the file and import it again.`,
    });
  }
  const byEnv = new Map<string, number>();
  for (const t of trajectories) byEnv.set(t.env, (byEnv.get(t.env) ?? 0) + 1);
  if (byEnv.size > 1) {
    const listed = [...byEnv.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([env, n]) => `'${env}' (${plural(n, 'episode')})`)
      .join(', ');
    problems.push({
      code: 'mixed-envs',
      message:
        `The file mixes ${byEnv.size} environments: ${listed}; a domain is one application. Split the file by environment ` +
        `(AgentGym/ETO: the item id's prefix before '_N'; ours/TRL: the env field) and import each part with its own --name.`,
    });
  }
  const noActions = trajectories
    .filter((t) => t.steps.length === 0 || t.steps.some((s) => s.action.trim() === ''))
    .map((t) => t.id);
  if (noActions.length > 0) {
    problems.push({
      code: 'no-actions',
      message:
        `${plural(noActions.length, 'episode')} ${noActions.length === 1 ? 'has' : 'have'} no actions (no steps, or a step with an empty action): ${listIds(noActions)}. ` +
        'Every step needs the action the agent took; drop these episodes or export them again with their actions.',
    });
  }
  const noInstruction = trajectories.filter((t) => collapse(t.task.instruction) === '').map((t) => t.id);
  if (noInstruction.length > 0) {
    problems.push({
      code: 'missing-instructions',
      message:
        `${plural(noInstruction.length, 'episode')} ${noInstruction.length === 1 ? 'has' : 'have'} no task instruction: ${listIds(noInstruction)}. ` +
        "The experience model and the policy are told the task: fill in task.instruction (ours), or start the first observation with 'Your task: …' " +
        '(AgentGym/ETO/TRL), or drop these episodes.',
    });
  }
  const steps = trajectories.flatMap((t) => t.steps);
  if (
    steps.length > 0 &&
    steps.every((s) => collapse(s.observation) === '') &&
    trajectories.every((t) => collapse(t.final_observation) === '')
  ) {
    problems.push({
      code: 'empty-observations',
      message:
        `Every observation is empty (${plural(steps.length, 'step')} checked): the experience model cannot learn what states look like. ` +
        'Export the text the application showed the agent at each step (the human/user turns of AgentGym/ETO/TRL, steps[].observation of ours).',
    });
  }
  if (steps.length > 0 && noActions.length < trajectories.length) {
    const actions = steps.map((s) => s.action).filter((a) => a.trim() !== '');
    const distinct = new Set(actions);
    if (distinct.size < MIN_DISTINCT_ACTIONS) {
      problems.push({
        code: 'vocabulary-too-small',
        message:
          `The action vocabulary is too small to learn from: every step takes the same action ('${[...distinct][0] ?? ''}'), so a policy has nothing to choose. ` +
          `A domain needs at least ${MIN_DISTINCT_ACTIONS} distinct actions; include episodes where the agent does different things.`,
      });
    } else if (distinct.size > MAX_DISTINCT_ACTIONS) {
      problems.push({
        code: 'vocabulary-too-large',
        message:
          `The action vocabulary is too large to learn from: ${distinct.size} distinct actions (at most ${MAX_DISTINCT_ACTIONS}). ` +
          "Use the application's commands as actions (e.g. click[id], search[query]), not free text, or import one sub-application at a time.",
      });
    } else if (actions.length >= UNIQUE_SHARE_MIN_STEPS && distinct.size / actions.length > MAX_UNIQUE_ACTION_SHARE) {
      problems.push({
        code: 'vocabulary-too-large',
        message:
          `The action vocabulary is too large to learn from: ${distinct.size} distinct actions in ${actions.length} steps ` +
          `(${Math.round((100 * distinct.size) / actions.length)}%, at most ${Math.round(100 * MAX_UNIQUE_ACTION_SHARE)}%), so almost no action repeats — ` +
          "free-text replies rather than commands? Write actions as the application's commands (e.g. click[id], search[query]) so they recur across episodes.",
      });
    }
  }
  return problems;
}

/** Task descriptions of a text file: one a line; blank lines and '#' comments skipped. */
export function parseTaskDescriptions(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => collapse(l))
    .filter((l) => l !== '' && !l.startsWith('#'));
}

function taskIdFor(envId: string, instruction: string, taken: Set<string>): string {
  const base = `${envId}/task-${hashString(instruction).toString(16).padStart(8, '0')}`;
  let id = base;
  for (let i = 2; taken.has(id); i++) id = `${base}-${i}`;
  taken.add(id);
  return id;
}

/**
 * The episode's last step as its outcome says it ended. The chat formats record the outcome for
 * the episode only, so an episode that ran out of steps ('truncated') gets its last step marked
 * truncated: the learned model's data then knows that the last action did not end it (sft-data.ts).
 * An episode with no recorded outcome ('unfinished') ends in success when the user says so.
 */
function withRecordedEnding(t: Trajectory, unrecordedOutcome: UnrecordedOutcome): Trajectory {
  const last = t.steps[t.steps.length - 1];
  if (!last || last.terminated) return t;
  if (t.result.terminate_reason === 'truncated') {
    return { ...t, steps: [...t.steps.slice(0, -1), { ...last, truncated: true }] };
  }
  if (t.result.terminate_reason === 'unfinished' && unrecordedOutcome === 'success') {
    return {
      ...t,
      steps: [...t.steps.slice(0, -1), { ...last, reward: 1, terminated: true, truncated: false }],
      result: { ...t.result, reward: 1, success: true, score: 1, terminate_reason: 'success' },
    };
  }
  return t;
}

/**
 * Validates `trajectories` (all of one application) and builds the domain; throws `DomainError`
 * listing every problem. Deterministic in (trajectories, options).
 */
export function buildDomain(
  name: string,
  trajectories: readonly Trajectory[],
  options: BuildDomainOptions = {},
): Domain {
  const problems = validateDomainData(name, trajectories, options);
  if (problems.length > 0) throw new DomainError(name, problems);
  const envId = domainEnvId(name);
  const heldOutShare = options.heldOutShare ?? 0.2;
  const seed = options.seed ?? 0;

  // ---- tasks: one per distinct instruction, then the extra descriptions -------------------------
  const taken = new Set<string>();
  const byInstruction = new Map<string, Task>();
  const makeTask = (instruction: string): Task => {
    let task = byInstruction.get(instruction);
    if (!task) {
      task = { id: taskIdFor(envId, instruction, taken), env: envId, instruction, difficulty: 0.5, origin: 'imported' };
      byInstruction.set(instruction, task);
    }
    return task;
  };
  // ---- episodes relabelled under the domain's env id (ids unique, prefixed) --------------------
  const ids = new Map<string, number>();
  const episodes: Trajectory[] = trajectories.map((t) => {
    const n = (ids.get(t.id) ?? 0) + 1;
    ids.set(t.id, n);
    const task = makeTask(collapse(t.task.instruction));
    return withRecordedEnding(
      {
        ...t,
        id: `${envId}/${t.id}${n > 1 ? `~${n}` : ''}`,
        env: envId,
        task: { ...task },
        source: 'imported',
        steps: t.steps.map((s) => ({ ...s, admissible: s.admissible.slice() })),
        result: { ...t.result },
      },
      options.unrecordedOutcome ?? 'unknown',
    );
  });
  const demonstrated = [...byInstruction.values()];
  const extra = [...new Set((options.tasks ?? []).map(collapse).filter((d) => d !== '' && !byInstruction.has(d)))].map(
    makeTask,
  );

  // ---- split: whole tasks held out, seeded ----------------------------------------------------
  const rng = Rng.fromSeed(seed, 'domain-split');
  const target = Math.max(1, Math.round(heldOutShare * episodes.length));
  let held = new Set<string>();
  let splitBy: DomainStats['splitBy'] = 'instruction';
  if (demonstrated.length >= 2) {
    const episodesOf = new Map<string, number>();
    for (const e of episodes) episodesOf.set(e.task.id, (episodesOf.get(e.task.id) ?? 0) + 1);
    let count = 0;
    for (const task of rng.shuffle(demonstrated)) {
      if (count >= target) break;
      const size = episodesOf.get(task.id) ?? 0;
      if (count + size <= target) {
        held.add(task.id);
        count += size;
      }
    }
  }
  let heldOut: Trajectory[];
  let train: Trajectory[];
  if (held.size > 0) {
    heldOut = episodes.filter((e) => held.has(e.task.id));
    train = episodes.filter((e) => !held.has(e.task.id));
  } else {
    // One instruction for all (or every task larger than the share): hold out episodes instead.
    splitBy = 'episode';
    const picked = new Set(
      rng.split('episodes').sample(
        episodes.map((_, i) => i),
        Math.min(target, episodes.length - 1),
      ),
    );
    heldOut = episodes.filter((_, i) => picked.has(i));
    train = episodes.filter((_, i) => !picked.has(i));
    held = new Set(heldOut.map((e) => e.task.id));
  }
  const heldOutTaskIds = demonstrated.filter((t) => held.has(t.id)).map((t) => t.id);
  const recordedAdmissible = episodes.flatMap((e) => e.steps).filter((s) => s.admissible.length > 0).length;
  // Steps that list no candidates get them from the training data (candidates.ts): the policy,
  // the dream and action agreement all need a list.
  const filled = withInferredCandidates(train, heldOut);
  train = filled.train;
  heldOut = filled.heldOut;

  // ---- card and stats ------------------------------------------------------------------------
  // Lists the application never recorded are not a state's content: the learned model leaves them out.
  const inferredAdmissible = recordedAdmissible === 0 && filled.inferredSteps > 0;
  const card = deriveDomainCard(train, { name, ...(inferredAdmissible ? { inferredAdmissible } : {}) });
  const derived = domainStats(episodes);
  const stats: DomainStats = {
    ...derived,
    distinctActions: new Set(episodes.flatMap((e) => e.steps.map((s) => s.action))).size,
    stepsWithAdmissible: recordedAdmissible,
    inferredAdmissibleSteps: filled.inferredSteps,
    assumedSuccesses:
      options.unrecordedOutcome === 'success'
        ? trajectories.filter((t) => t.result.terminate_reason === 'unfinished').length
        : 0,
    instructions: demonstrated.length,
    extraTasks: extra.length,
    trainEpisodes: train.length,
    heldOutEpisodes: heldOut.length,
    splitBy,
    maxLength: Math.max(...episodes.map((e) => e.steps.length)),
  };
  const warnings: string[] = [];
  const renamed = episodes.length - ids.size;
  if (renamed > 0) {
    warnings.push(
      `${renamed} episode${renamed === 1 ? '' : 's'} repeated an id of another and ${renamed === 1 ? 'was' : 'were'} kept as <id>~2, ~3, …: ` +
        'give every episode an id of its own (dreamgym convert writes unique ids).',
    );
  }
  if (stats.inferredAdmissibleSteps > 0) {
    warnings.push(
      `${plural(stats.inferredAdmissibleSteps, 'step')} of ${stats.steps} listed no admissible actions and got ` +
        'candidates inferred from the training data (the demonstrated action and those taken in similar states, ' +
        `at most ${INFERRED_CANDIDATES}): the policy chooses among them, and action agreement is measured against ` +
        'them. Export the actions available at ' +
        'each step (AgentGym: an "AVAILABLE ACTIONS: a,b" line) if the application has them.',
    );
  }
  const unrecorded = episodes.filter((e) => e.result.terminate_reason === 'unfinished').length;
  if (unrecorded > 0) {
    warnings.push(
      `${plural(unrecorded, 'episode')} of ${episodes.length} record no outcome (AgentGym records have no reward): ` +
        'their last steps teach no verdict, and the dream cannot learn how they end. Import with ' +
        '--unrecorded-outcome success if every ' +
        'such episode reached its goal, or export ETO or our format, which carry the reward.',
    );
  }
  if (splitBy === 'episode') {
    warnings.push(
      'The episodes do not have distinct enough instructions for a split by task: held-out episodes share tasks with training ones.',
    );
  }
  return {
    name,
    envId,
    card,
    train,
    heldOut,
    tasks: [...demonstrated, ...extra],
    heldOutTaskIds,
    stats,
    warnings,
    seed,
    heldOutShare,
  };
}

/** A short human-readable summary of a domain (what `domain import` prints). */
export function domainSummary(domain: Domain): string {
  const s = domain.stats;
  const pct = (x: number) => `${Math.round(100 * x)}%`;
  return [
    `domain '${domain.name}' (${domain.envId})`,
    `  episodes   ${s.episodes} (${s.trainEpisodes} train, ${s.heldOutEpisodes} held out by ${s.splitBy}), ${s.steps} steps, ${s.meanLength.toFixed(1)} on average, longest ${s.maxLength}`,
    `  tasks      ${domain.tasks.length} (${s.instructions} demonstrated, ${s.extraTasks} extra descriptions; ${domain.heldOutTaskIds.length} held out)`,
    `  outcomes   ${pct(s.successRate)} succeed, ${pct(s.terminatedShare)} end by themselves`,
    `  actions    ${s.distinctActions} distinct; kinds ${s.actionKinds
      .slice(0, 6)
      .map((k) => `${k.kind} (${k.count})`)
      .join(', ')}`,
    `  admissible listed on ${s.stepsWithAdmissible} of ${s.steps} steps; inferred on ${s.inferredAdmissibleSteps}`,
    `  card       ${domain.card.text}`,
    ...domain.warnings.map((w) => `  warning    ${w}`),
  ].join('\n');
}
