/**
 * The supervised data of the learned experience model (the paper's SFT step for M_exp), built
 * from the replay buffer's REAL transitions — offline seed sets, imports, real rollouts, an
 * imported domain's episodes — never from dreamed ones.
 *
 * - (context → answer) pairs: the context is what an experience model may see (task
 *   instruction, last H steps, current state, action, top-k retrieved transitions — the same
 *   retrieval as the reasoning model, the target's own episode left out); the answer is the next
 *   abstract state, its admissible actions, `valid`, the reward and `terminated` (format.ts).
 * - (task → first state) pairs, one per task, so dreamed starts work too.
 * - Train and validation are split by task (a seeded hash of the task id), and tasks with a
 *   held-out evaluation seed (≥ 1e9) never appear at all.
 * - The same pairs export as TRL `messages` JSONL with the reasoning model's prompt (and its JSON
 *   answer), for fine-tuning a real LLM with TRL or Unsloth.
 *
 * Every recorded transition becomes a pair, except where the data cannot say what followed (see
 * `answerOf`); those are counted by reason (`PairAccount`, `describePairAccount`), never dropped
 * silently. Imported domains once lost most of theirs: an ETO or AgentGym export lists no
 * admissible actions, and every running step without a next list was dropped (28 episodes of
 * about 110 transitions gave 18 pairs, their last steps). `domain import` now infers the lists
 * (data/candidates.ts), and the ends of imported episodes are kept as described at `answerOf`.
 */
import type { ReplayBuffer } from '../../buffer/buffer';
import { hashString } from '../../rng';
import type { Step, Task, Transition } from '../../types';
import { HELD_OUT_SEED_BASE } from '../../envs/env';
import {
  abstractAdmissible,
  modelledAdmissible,
  abstractionOf,
  abstractObservation,
  GENERIC_ABSTRACTION,
  type DomainCard,
} from '../domain-card';
import { buildNextPrompt, DEFAULT_PROMPT_OPTIONS } from '../prompts';
import { outcomeOf } from '../types';
import {
  encodeAnswer,
  encodeContext,
  encodeInitialAnswer,
  encodeInitialContext,
  encodePrompt,
  type Answer,
  type FormatOptions,
  type Sequence,
} from './format';
import type { Tokenizer, Tokens } from './tokenizer';

export interface SftPair {
  kind: 'next' | 'initial';
  taskId: string;
  episodeId: string;
  context: Sequence;
  /** The decoder's fixed-length prompt (format.ts `encodePrompt`). */
  prompt: Tokens;
  answer: Sequence;
}

/** One recorded episode: its transitions in step order. */
export interface RecordedEpisode {
  id: string;
  taskId: string;
  instruction: string;
  steps: Transition[];
}

export interface SftSplit {
  train: RecordedEpisode[];
  validation: RecordedEpisode[];
  /** Episodes dropped because their task is in the held-out evaluation range. */
  heldOutDropped: number;
  /** Their transitions (counted as left out, `held-out-task`). */
  heldOutSteps: number;
}

/** A task is in the held-out evaluation range when its seed is ≥ 1e9. */
export function isHeldOutTask(task: Pick<Task, 'seed'> | undefined): boolean {
  return typeof task?.seed === 'number' && task.seed >= HELD_OUT_SEED_BASE;
}

/** The buffer's real episodes of an env (offline and real sources; dreamed ones never). */
export async function realEpisodes(
  buffer: ReplayBuffer,
  env: string,
): Promise<{ episodes: RecordedEpisode[]; tasks: Map<string, Task> }> {
  const transitions = await buffer.store.listTransitions({ env, source: ['offline', 'real'] });
  const tasks = new Map((await buffer.store.listTasks(env)).map((e) => [e.id, e.task]));
  return { episodes: groupEpisodes(transitions), tasks };
}

export function groupEpisodes(transitions: readonly Transition[]): RecordedEpisode[] {
  const byId = new Map<string, RecordedEpisode>();
  for (const t of transitions) {
    let e = byId.get(t.episodeId);
    if (!e) byId.set(t.episodeId, (e = { id: t.episodeId, taskId: t.taskId, instruction: t.instruction, steps: [] }));
    e.steps.push(t);
  }
  const episodes = [...byId.values()];
  for (const e of episodes) e.steps.sort((a, b) => a.stepIndex - b.stepIndex);
  return episodes.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Splits episodes by task: about `validationShare` of the tasks (by a seeded hash) validate. */
export function splitByTask(
  episodes: readonly RecordedEpisode[],
  tasks: ReadonlyMap<string, Task>,
  validationShare: number,
  seed: number,
): SftSplit {
  const train: RecordedEpisode[] = [],
    validation: RecordedEpisode[] = [];
  let heldOutDropped = 0,
    heldOutSteps = 0;
  for (const e of episodes) {
    if (isHeldOutTask(tasks.get(e.taskId))) {
      heldOutDropped++;
      heldOutSteps += e.steps.length;
      continue;
    }
    const u = hashString(e.taskId, (seed * 2654435761) >>> 0) / 4294967296;
    (u < validationShare ? validation : train).push(e);
  }
  return { train, validation, heldOutDropped, heldOutSteps };
}

/** What an ended episode's last state reads as where the data records none (the chat formats may end on an action). */
export const ENDED_OBSERVATION = 'The episode is over.';

/**
 * The recorded list of the state after a running step: the next step's, or, at the last step of
 * an imported domain's episode that ran out of steps (`truncated`: it did not end there), the
 * state's own list, the last one the data shows. Undefined where nothing can stand in: a
 * registered env's step-limit step (its shipped data holds plenty of running steps), and the
 * last step of an episode with no recorded outcome (it may or may not have ended there).
 */
function runningNextAdmissible(card: DomainCard, t: Transition): readonly string[] | undefined {
  if (t.nextAdmissible.length > 0) return t.nextAdmissible;
  return card.abstraction === GENERIC_ABSTRACTION && t.truncated && t.admissible.length > 0 ? t.admissible : undefined;
}

/**
 * What the model must learn to write after a recorded step (undefined: not learnable, see
 * `runningNextAdmissible`). An ended step whose next observation was not recorded gets
 * `ENDED_OBSERVATION` (a dreamed state may not be empty); a running one gets the state it was in.
 */
export function answerOf(card: DomainCard, t: Transition): Answer | undefined {
  if (!t.valid) return { valid: false, terminated: false, reward: 0, observation: '', admissible: [] };
  const nextAdmissible = t.terminated ? [] : runningNextAdmissible(card, t);
  if (!nextAdmissible) return undefined;
  const recorded = t.nextObservation.trim() !== '';
  const nextText = recorded ? t.nextObservation : t.terminated ? ENDED_OBSERVATION : t.observation;
  const observation = abstractObservation(card, nextText);
  const admissible = abstractAdmissible(card, nextAdmissible);
  const unchanged =
    !t.terminated &&
    observation === abstractObservation(card, t.observation) &&
    sameList(admissible, abstractAdmissible(card, t.admissible));
  return {
    valid: true,
    terminated: t.terminated,
    reward: t.terminated ? outcomeOf(t.reward) : 0,
    observation,
    admissible,
    ...(unchanged ? { unchanged } : {}),
  };
}

/**
 * Why a recorded transition gave no pair (`answerOf` undefined), so that none is dropped silently:
 *   unrecorded-outcome  the last step of an episode with no recorded outcome (it may or may not have ended there)
 *   step-limit          a registered env's step-limit step (it did not end there; its next list is not recorded)
 *   no-next-list        a running step whose next state lists no actions (data imported without inferred lists)
 *   held-out-task       its task is in the held-out evaluation range (seed ≥ 1e9): never trained on
 *   episode-limit       its episode is beyond the training's episode limit (`maxEpisodes`)
 */
export type LeftOutReason = 'unrecorded-outcome' | 'step-limit' | 'no-next-list' | 'held-out-task' | 'episode-limit';

/** Each reason in words, with its fix: the CLI and the page print the same. */
export const LEFT_OUT_REASONS: Readonly<Record<LeftOutReason, { what: string; fix: string }>> = Object.freeze({
  'unrecorded-outcome': {
    what: 'last steps of episodes with no recorded outcome',
    fix:
      'import with --unrecorded-outcome success if those episodes reached their goal, ' +
      'or export a format that records the reward (ETO, ours)',
  },
  'step-limit': {
    what: "steps at a registered env's step limit (no ending, and no next list recorded)",
    fix: 'none needed: a step-limit cut is no ending for the model to learn',
  },
  'no-next-list': {
    what: 'running steps whose next state lists no actions',
    fix: 'import the episodes with dreamgym domain import, which infers candidates for such steps',
  },
  'held-out-task': {
    what: 'steps of held-out evaluation tasks (seed ≥ 1e9)',
    fix: 'none needed: held-out tasks are never trained on',
  },
  'episode-limit': {
    what: 'steps of episodes beyond --episodes',
    fix: 'raise --episodes, or leave it out to train on every episode',
  },
});

/** Why `answerOf(card, t)` is undefined for the step of an episode (`last`: its final step). */
export function leftOutReason(card: DomainCard, t: Transition, last: boolean): LeftOutReason {
  if (t.truncated && card.abstraction !== GENERIC_ABSTRACTION) return 'step-limit';
  return last && !t.truncated ? 'unrecorded-outcome' : 'no-next-list';
}

/**
 * Every recorded transition counted once: made a pair (`nextPairs`) or left out by a reason, so
 * `transitions === nextPairs + Σ leftOut`. Initial pairs (one per task) come from first states.
 */
export interface PairAccount {
  transitions: number;
  nextPairs: number;
  initialPairs: number;
  leftOut: Partial<Record<LeftOutReason, number>>;
}

export function emptyPairAccount(): PairAccount {
  return { transitions: 0, nextPairs: 0, initialPairs: 0, leftOut: {} };
}

/** Counts `steps` transitions left out for `reason`. */
export function countLeftOut(account: PairAccount, reason: LeftOutReason, steps: number): void {
  if (steps <= 0) return;
  account.transitions += steps;
  account.leftOut[reason] = (account.leftOut[reason] ?? 0) + steps;
}

/** The steps of `episodes` left out whole for `reason`. */
export function countEpisodesLeftOut(
  account: PairAccount,
  reason: LeftOutReason,
  episodes: readonly RecordedEpisode[],
): void {
  countLeftOut(
    account,
    reason,
    episodes.reduce((n, e) => n + e.steps.length, 0),
  );
}

/** Two accounts added (train and validation pairs of one data set). */
export function addPairAccounts(a: PairAccount, b: PairAccount): PairAccount {
  const leftOut: PairAccount['leftOut'] = { ...a.leftOut };
  for (const [reason, n] of Object.entries(b.leftOut) as [LeftOutReason, number][])
    leftOut[reason] = (leftOut[reason] ?? 0) + n;
  return {
    transitions: a.transitions + b.transitions,
    nextPairs: a.nextPairs + b.nextPairs,
    initialPairs: a.initialPairs + b.initialPairs,
    leftOut,
  };
}

/**
 * "N pairs from M recorded transitions; K left out: <reason> (fix: …)", the one wording of the CLI
 * and the page. N counts the next-state pairs and the first-state pairs (one per task).
 */
export function describePairAccount(account: PairAccount): string {
  const { transitions, nextPairs, initialPairs } = account;
  const reasons = Object.keys(LEFT_OUT_REASONS) as LeftOutReason[]; // one order, whatever came first
  const entries = reasons.map((r) => [r, account.leftOut[r] ?? 0] as const).filter(([, n]) => n > 0);
  const leftOut = entries.reduce((n, [, k]) => n + k, 0);
  const head =
    `${nextPairs + initialPairs} pairs from ${transitions} recorded transitions ` +
    `(${nextPairs} next-state pairs, ${initialPairs} first-state pairs)`;
  if (leftOut === 0) return `${head}; none left out`;
  const why = entries.map(([r, n]) => `${LEFT_OUT_REASONS[r].what}: ${n} (fix: ${LEFT_OUT_REASONS[r].fix})`);
  return `${head}; ${leftOut} left out: ${why.join('; ')}`;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * The first state's admissible list as a model writes it: less what the page implies where the
 * card's abstraction leaves that out (abstractAdmissible); else whole (it defines the globals).
 */
export function initialAdmissible(card: DomainCard, admissible: readonly string[]): string[] {
  if (card.inferredAdmissible) return [];
  return abstractionOf(card).abstractAdmissible ? abstractAdmissible(card, admissible) : admissible.slice();
}

/**
 * The answer a learned model writes: where the card's lists are inferred (DomainCard.inferredAdmissible),
 * without the list, and unchanged when the page is (its list follows from the page and the action).
 */
export function learnedAnswer(card: DomainCard, answer: Answer, t: Pick<Transition, 'observation'>): Answer {
  if (!card.inferredAdmissible || !answer.valid) return answer;
  const { unchanged: _listed, ...rest } = answer;
  const unchanged = !answer.terminated && answer.observation === abstractObservation(card, t.observation);
  return { ...rest, admissible: [], ...(unchanged ? { unchanged } : {}) };
}

/** Every text the tokenizer should learn from: instructions, abstract states, actions. */
export function* corpusTexts(card: DomainCard, episodes: readonly RecordedEpisode[]): Generator<string> {
  for (const e of episodes) {
    yield e.instruction;
    for (const t of e.steps) {
      yield abstractObservation(card, t.observation);
      yield t.action;
      yield abstractObservation(card, t.nextObservation);
      for (const a of modelledAdmissible(card, t.nextAdmissible)) yield a;
    }
    for (const a of initialAdmissible(card, e.steps[0]?.admissible ?? [])) yield a;
  }
}

/** Retrieval for a training pair: the reasoning model's query, the target's own episode left out. */
export type ExampleRetriever = (t: Transition, k: number) => Promise<Transition[]>;

export function bufferRetriever(buffer: ReplayBuffer): ExampleRetriever {
  return async (t, k) => {
    if (k <= 0) return [];
    const hits = await buffer.retrieve(
      { instruction: t.instruction, observation: t.observation, action: t.action },
      k + 1,
      { env: t.env, validOnly: true, diverse: true, source: ['offline', 'real'] },
    );
    return hits
      .map((h) => h.transition)
      .filter((x) => x.episodeId !== t.episodeId)
      .slice(0, k);
  };
}

/** The steps of an episode before step `i`, as an experience model's history. */
function historyBefore(e: RecordedEpisode, i: number): Step[] {
  return e.steps.slice(0, i).map((s) => ({
    observation: s.observation,
    admissible: s.admissible,
    action: s.action,
    reward: s.reward,
    terminated: s.terminated,
    truncated: s.truncated,
    valid: s.valid,
  }));
}

/**
 * The (context → answer) and (task → first state) pairs of some episodes. Each transition is
 * counted in `account`: a pair made, or left out with its reason (`leftOutReason`).
 */
export async function buildPairs(
  episodes: readonly RecordedEpisode[],
  tokenizer: Tokenizer,
  card: DomainCard,
  format: FormatOptions,
  retrieve: ExampleRetriever,
  account: PairAccount = emptyPairAccount(),
): Promise<SftPair[]> {
  const pairs: SftPair[] = [];
  const startedTasks = new Set<string>();
  for (const e of episodes) {
    const first = e.steps[0];
    if (first && first.stepIndex === 0 && first.admissible.length > 0 && !startedTasks.has(e.taskId)) {
      startedTasks.add(e.taskId);
      account.initialPairs++;
      const context = encodeInitialContext(tokenizer, card, { instruction: e.instruction }, [], format);
      pairs.push({
        kind: 'initial',
        taskId: e.taskId,
        episodeId: e.id,
        context,
        prompt: encodePrompt(tokenizer, null),
        answer: encodeInitialAnswer(
          tokenizer,
          {
            observation: abstractObservation(card, first.observation),
            admissible: initialAdmissible(card, first.admissible),
          },
          format,
          context,
        ),
      });
    }
    for (let i = 0; i < e.steps.length; i++) {
      const t = e.steps[i];
      const answer = answerOf(card, t);
      if (!answer) {
        countLeftOut(account, leftOutReason(card, t, i === e.steps.length - 1), 1);
        continue;
      }
      account.transitions++;
      account.nextPairs++;
      const history = historyBefore(e, i);
      const context = encodeContext(
        tokenizer,
        card,
        {
          task: { instruction: e.instruction },
          history,
          state: { text: t.observation, admissible: t.admissible },
          action: t.action,
          retrieved: await retrieve(t, format.k),
        },
        format,
      );
      pairs.push({
        kind: 'next',
        taskId: e.taskId,
        episodeId: e.id,
        context,
        prompt: encodePrompt(tokenizer, t.action),
        answer: encodeAnswer(tokenizer, learnedAnswer(card, answer, t), format, context),
      });
    }
  }
  return pairs;
}

/**
 * The pairs as TRL `messages` records: the reasoning model's prompt (system + user, without the
 * reasoning field: the data has no reasoning traces) and the JSON answer a fine-tuned model
 * should give. One JSON object a line.
 */
export async function trlMessagesJsonl(
  episodes: readonly RecordedEpisode[],
  card: DomainCard,
  retrieve: ExampleRetriever,
  k = DEFAULT_PROMPT_OPTIONS.k,
): Promise<string> {
  const options = { ...DEFAULT_PROMPT_OPTIONS, k, reasoning: false };
  const lines: string[] = [];
  for (const e of episodes) {
    for (let i = 0; i < e.steps.length; i++) {
      const t = e.steps[i];
      const answer = answerOf(card, t);
      if (!answer) continue;
      const history = historyBefore(e, i);
      const prompt = buildNextPrompt(
        {
          card,
          task: { id: e.taskId, env: t.env, instruction: e.instruction, difficulty: 0, origin: 'imported' },
          history,
          state: {
            text: t.observation,
            admissible: t.admissible,
            task: { id: e.taskId, env: t.env, instruction: e.instruction, difficulty: 0, origin: 'imported' },
          },
          action: t.action,
          retrieved: await retrieve(t, k),
        },
        options,
      );
      const reply = {
        valid: answer.valid,
        next_state: answer.valid
          ? { observation: answer.observation, admissible: answer.admissible }
          : {
              observation: abstractObservation(card, t.observation),
              admissible: abstractAdmissible(card, t.admissible),
            },
        reward: answer.reward,
        terminated: answer.terminated,
      };
      lines.push(
        JSON.stringify({ messages: [...prompt.messages, { role: 'assistant', content: JSON.stringify(reply) }] }),
      );
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}
