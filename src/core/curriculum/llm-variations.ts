/**
 * LLM-written curriculum variations (DreamGym §4, the "task generator" half of M_task): for each
 * seed task — a task whose rollout group had mixed outcomes, success rate p, variance V = p(1 − p)
 * — the model is asked, in two bounded-JSON prompts,
 *
 *   1. VARIATION: write C candidate variations of the seed, one notch harder when p ≥ 0.5 and
 *      easier otherwise, in the same domain (the env's domain card is in the prompt), solvable and
 *      concrete: {"variations":[{"instruction","difficulty_change","rationale"}]} with every
 *      string bounded by maxLength;
 *   2. SELECTION: pick at most K of the surviving candidates — distinct from each other and from
 *      the seed, plausible in this domain, in the requested direction: {"chosen":[numbers]}.
 *      The candidates are shown in a seeded random order (no position bias toward the first).
 *
 * Between the two, every candidate is schema-checked (non-empty, instruction length bounds, the
 * requested direction, not the seed itself) and deduplicated against the other candidates, the
 * seed, and every task already known (the curriculum's bank and pending queue, and the tasks of
 * this call): exact match after normalisation (lower case, punctuation dropped), or token-set
 * Jaccard similarity above `similarity`.
 *
 * A broken answer (no JSON, wrong shape, an index out of range, every candidate rejected, a
 * length cut-off) is retried with the rejected answer and the reason shown to the model, like the
 * experience model (reasoning-model.ts); after the last retry it is recorded (`stats`,
 * `invalidLog`) and that seed yields no task this time. Bad answers never throw; errors of the
 * engine itself (server down, aborted) propagate, since they are not answers.
 *
 * The tasks it makes are dream-only: origin 'llm', parent = the seed's id, the seed's difficulty,
 * no spec and no generator seed (no real env can rebuild them, so a DreamEnv starts them from the
 * experience model's `initial(task)`), and an id derived from the normalised instruction
 * (`${env}/llm/${hash}`), so the same text is the same task in every run.
 *
 * Deterministic: the request `seed` and the candidate order come from Rng streams of (seed,
 * iteration, seed task id); the same scripted answers give the same tasks.
 */
import { hashString, Rng } from '../rng';
import type { ChatModel } from '../llm/types';
import type { Task } from '../types';
import { bound, collapse, promptCardFor, type DomainCard } from '../experience/domain-card';
import { askJson, type Asked, type JsonPrompt, type ParseOutcome } from '../experience/ask-json';
import { extractJson } from '../experience/reasoning-model';

export type VariationDirection = 'harder' | 'easier';

/** A seed task and its group's outcome this iteration. */
export interface VariationSeed {
  task: Task;
  successes: number;
  rollouts: number;
}

export interface LlmTaskGeneratorOptions {
  /** Candidates asked for per seed (C, default 4). */
  candidates?: number;
  /** Candidates kept per seed after selection (K, default 2). */
  keep?: number;
  /** Retries after a broken answer (default 2). */
  retries?: number;
  /** Token budget of a variation answer (default 600) and of a selection answer (default 80). */
  maxTokens?: number;
  selectionMaxTokens?: number;
  /** Sampling temperature of the variation prompt (default 0.7: variety; the seed keeps it reproducible). Selection uses 0. */
  temperature?: number;
  /** Base of every request seed and of the candidate order (default 0). */
  seed?: number;
  /** The env's card; default the built-in card of the seed's env, else a generic one. */
  domainCard?: DomainCard;
  /** Instruction length bounds in characters (default 12..300). */
  minInstructionChars?: number;
  maxInstructionChars?: number;
  /** maxLength of a rationale (default 160). */
  rationaleChars?: number;
  /** Two instructions whose token sets have Jaccard similarity above this are duplicates (default 0.9). */
  similarity?: number;
  /** Broken answers kept in `invalidLog` (most recent; default 50). */
  invalidLogSize?: number;
}

export interface GeneratorStats {
  /** Model calls (retries included). */
  calls: number;
  /** Answers that stayed broken after their retries (recorded, never thrown). */
  invalidAnswers: number;
  /** Retried answers (each rejected attempt that was followed by another). */
  retries: number;
  /** Candidates received, and why some were dropped. */
  candidates: number;
  rejectedSchema: number;
  rejectedDirection: number;
  duplicates: number;
  /** Candidates the selection step left out. */
  notSelected: number;
  /** Tasks made. */
  tasks: number;
  promptTokens: number;
  completionTokens: number;
}

export interface InvalidAnswer {
  iteration: number;
  seedTaskId: string;
  step: 'variation' | 'selection';
  reason: string;
  /** The last raw answer (bounded). */
  raw: string;
}

export interface GenerateContext {
  iteration: number;
  /** Tasks already known (bank, pending): candidates duplicating any of them are dropped. */
  known?: Iterable<Pick<Task, 'id' | 'instruction'>>;
  /** A few instructions of the env's own tasks, shown as examples of the style (at most 3 are used). */
  examples?: readonly string[];
  signal?: AbortSignal;
}

export interface GenerateResult {
  tasks: Task[];
  /** Broken answers of this call (after retries). */
  invalid: number;
}

/** A candidate variation as checked. */
export interface Candidate {
  instruction: string;
  difficultyChange: string;
  rationale: string;
}

// =============================================================================================
// Normalisation and similarity
// =============================================================================================

/** Lower-case words and numbers of a text (decimals kept whole): what duplicates are judged on. */
export function instructionTokens(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/\p{L}+|\p{N}+(?:\.\p{N}+)?/gu) ?? []
  );
}

/** The normalised form of an instruction: its tokens joined by single spaces. */
export function normaliseInstruction(text: string): string {
  return instructionTokens(text).join(' ');
}

/** Jaccard similarity of two token sets (1 for two empty sets). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let common = 0;
  for (const t of a) if (b.has(t)) common++;
  return common / (a.size + b.size - common);
}

/** The stable id of an LLM task: env, 'llm', and a hash of the normalised instruction. */
export function llmTaskId(env: string, instruction: string): string {
  const norm = normaliseInstruction(instruction);
  return `${env}/llm/${hashString(norm).toString(16).padStart(8, '0')}${hashString(norm, 0x9e3779b9).toString(16).padStart(8, '0')}`;
}

/** Known instructions, checked by normalised text and by token-set similarity. */
class DuplicateIndex {
  private readonly exact = new Set<string>();
  private readonly ids = new Set<string>();
  private readonly sets: Set<string>[] = [];
  constructor(private readonly threshold: number) {}

  add(instruction: string, id?: string): void {
    const norm = normaliseInstruction(instruction);
    this.exact.add(norm);
    if (id) this.ids.add(id);
    this.sets.push(new Set(norm ? norm.split(' ') : []));
  }

  /** Why `instruction` duplicates a known one, or null. */
  duplicate(instruction: string, id: string): string | null {
    const norm = normaliseInstruction(instruction);
    if (this.exact.has(norm) || this.ids.has(id)) return 'same text as a known task';
    const set = new Set(norm.split(' '));
    for (const s of this.sets) {
      const j = jaccard(set, s);
      if (j > this.threshold) return `near-duplicate of a known task (Jaccard ${j.toFixed(2)})`;
    }
    return null;
  }
}

// =============================================================================================
// Schemas and parsing
// =============================================================================================

export function variationSchema(o: {
  candidates: number;
  minInstructionChars: number;
  maxInstructionChars: number;
  rationaleChars: number;
}): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      variations: {
        type: 'array',
        minItems: 1,
        maxItems: o.candidates,
        items: {
          type: 'object',
          properties: {
            instruction: { type: 'string', minLength: o.minInstructionChars, maxLength: o.maxInstructionChars },
            difficulty_change: { type: 'string', enum: ['harder', 'easier', 'same'] },
            rationale: { type: 'string', maxLength: o.rationaleChars },
          },
          required: ['instruction', 'difficulty_change', 'rationale'],
          additionalProperties: false,
        },
      },
    },
    required: ['variations'],
    additionalProperties: false,
  };
}

export function selectionSchema(candidates: number, keep: number): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      chosen: {
        type: 'array',
        items: { type: 'integer', minimum: 1, maximum: candidates },
        maxItems: Math.min(keep, candidates),
        uniqueItems: true,
      },
    },
    required: ['chosen'],
    additionalProperties: false,
  };
}

/** JSON + shape check of a variation answer (each candidate is checked separately afterwards). */
export function parseVariationAnswer(text: string, maxCandidates: number): ParseOutcome<Candidate[]> {
  const json = extractJson(text);
  if (!json.ok) return json;
  const list = json.value.variations;
  if (!Array.isArray(list)) return { ok: false, kind: 'schema', reason: '"variations" must be an array' };
  if (list.length === 0) return { ok: false, kind: 'schema', reason: '"variations" is empty' };
  const out: Candidate[] = [];
  for (const [i, item] of list.slice(0, maxCandidates).entries()) {
    const o = item as Record<string, unknown> | null;
    if (!o || typeof o !== 'object' || Array.isArray(o) || typeof o.instruction !== 'string') {
      return { ok: false, kind: 'schema', reason: `variation ${i + 1} must be an object with a string "instruction"` };
    }
    out.push({
      instruction: collapse(o.instruction),
      difficultyChange: typeof o.difficulty_change === 'string' ? o.difficulty_change.trim().toLowerCase() : '',
      rationale: typeof o.rationale === 'string' ? collapse(o.rationale) : '',
    });
  }
  return { ok: true, value: out };
}

/** JSON + range check of a selection answer: distinct 1-based indices, at most `keep`. */
export function parseSelectionAnswer(text: string, candidates: number, keep: number): ParseOutcome<number[]> {
  const json = extractJson(text);
  if (!json.ok) return json;
  const chosen = json.value.chosen;
  if (!Array.isArray(chosen))
    return { ok: false, kind: 'schema', reason: '"chosen" must be an array of candidate numbers' };
  const seen = new Set<number>();
  for (const c of chosen) {
    if (typeof c !== 'number' || !Number.isInteger(c) || c < 1 || c > candidates) {
      return {
        ok: false,
        kind: 'schema',
        reason: `"chosen" holds ${JSON.stringify(c)}; use candidate numbers 1..${candidates}`,
      };
    }
    if (seen.has(c)) return { ok: false, kind: 'schema', reason: `"chosen" names candidate ${c} twice` };
    seen.add(c);
  }
  if (chosen.length > keep)
    return { ok: false, kind: 'schema', reason: `"chosen" names ${chosen.length} candidates; pick at most ${keep}` };
  return { ok: true, value: chosen as number[] };
}

// =============================================================================================
// The generator
// =============================================================================================

export class LlmTaskGenerator {
  readonly candidates: number;
  readonly keep: number;
  readonly retries: number;
  readonly maxTokens: number;
  readonly selectionMaxTokens: number;
  readonly temperature: number;
  readonly seed: number;
  readonly minInstructionChars: number;
  readonly maxInstructionChars: number;
  readonly rationaleChars: number;
  readonly similarity: number;
  readonly label: string;
  readonly stats: GeneratorStats = {
    calls: 0,
    invalidAnswers: 0,
    retries: 0,
    candidates: 0,
    rejectedSchema: 0,
    rejectedDirection: 0,
    duplicates: 0,
    notSelected: 0,
    tasks: 0,
    promptTokens: 0,
    completionTokens: 0,
  };
  /** The most recent broken answers (after their retries), oldest first. */
  readonly invalidLog: InvalidAnswer[] = [];
  private readonly invalidLogSize: number;

  constructor(
    readonly chat: ChatModel,
    readonly options: LlmTaskGeneratorOptions = {},
  ) {
    this.candidates = Math.max(1, Math.floor(options.candidates ?? 4));
    this.keep = Math.max(1, Math.floor(options.keep ?? 2));
    this.retries = Math.max(0, Math.floor(options.retries ?? 2));
    this.maxTokens = options.maxTokens ?? 600;
    this.selectionMaxTokens = options.selectionMaxTokens ?? 80;
    this.temperature = options.temperature ?? 0.7;
    this.seed = options.seed ?? 0;
    this.minInstructionChars = options.minInstructionChars ?? 12;
    this.maxInstructionChars = options.maxInstructionChars ?? 300;
    this.rationaleChars = options.rationaleChars ?? 160;
    this.similarity = options.similarity ?? 0.9;
    this.invalidLogSize = options.invalidLogSize ?? 50;
    if (this.minInstructionChars < 1 || this.maxInstructionChars < this.minInstructionChars) {
      throw new RangeError(
        `LlmTaskGenerator: instruction bounds ${this.minInstructionChars}..${this.maxInstructionChars} are empty; use 1 ≤ min ≤ max.`,
      );
    }
    if (!(this.similarity > 0 && this.similarity <= 1))
      throw new RangeError(`LlmTaskGenerator: similarity must be in (0, 1]; got ${this.similarity}.`);
    this.label = `${chat.engine} ${chat.id} (task variations, C=${this.candidates}, K=${this.keep})`;
  }

  cardFor(envId: string): DomainCard {
    return this.options.domainCard ?? promptCardFor(envId);
  }

  /** The direction of a seed's variations: harder when the group mostly succeeded (p ≥ 0.5). */
  static direction(seed: Pick<VariationSeed, 'successes' | 'rollouts'>): VariationDirection {
    return seed.rollouts > 0 && seed.successes / seed.rollouts >= 0.5 ? 'harder' : 'easier';
  }

  /** The variation prompt of one seed (exposed for inspection and tests). */
  variationPrompt(seed: VariationSeed, examples: readonly string[] = []): JsonPrompt {
    const card = this.cardFor(seed.task.env);
    const direction = LlmTaskGenerator.direction(seed);
    const p = seed.rollouts > 0 ? seed.successes / seed.rollouts : 0;
    const system = [
      'You write training tasks for an RL agent: variations of a task it is learning, one notch harder or easier.',
      `Environment: ${card.name}.`,
      card.text,
      `Reply JSON only: {"variations":[{"instruction":"${this.minInstructionChars}–${this.maxInstructionChars} chars","difficulty_change":"harder"|"easier","rationale":"≤${this.rationaleChars} chars: what changed"}]}.`,
    ].join('\n');
    const change =
      direction === 'harder'
        ? 'HARDER: add one constraint or step, or tighten a limit, so success needs more care'
        : 'EASIER: drop or relax one constraint or step, so success needs less care';
    const lines = [
      `Seed task: ${bound(collapse(seed.task.instruction), this.maxInstructionChars)}`,
      `The agent succeeded in ${seed.successes} of ${seed.rollouts} tries (p = ${p.toFixed(2)}, reward variance V = p(1 − p) = ${(p * (1 - p)).toFixed(3)}).`,
    ];
    const shown = examples.slice(0, 3);
    if (shown.length)
      lines.push('Other tasks of this environment (their style):', ...shown.map((e) => `- ${bound(collapse(e), 160)}`));
    lines.push(
      `Write ${this.candidates} variations of the seed task, each one notch ${change}.`,
      'Rules: the same domain and the same kind of goal; solvable with the actions this environment has; concrete',
      '(name the object, attributes, places or limits exactly, as the seed does); one self-contained instruction each;',
      `different from the seed and from each other; difficulty_change "${direction}" for each.`,
    );
    return {
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: lines.join('\n') },
      ],
      jsonSchema: variationSchema(this),
    };
  }

  /** The selection prompt: the seed, the direction and the numbered candidates. */
  selectionPrompt(seed: VariationSeed, shown: readonly Candidate[]): JsonPrompt {
    const card = this.cardFor(seed.task.env);
    const direction = LlmTaskGenerator.direction(seed);
    const keep = Math.min(this.keep, shown.length);
    const system = [
      'You review candidate training tasks for an RL agent and pick the best ones.',
      `Environment: ${card.name}.`,
      card.text,
      `Reply JSON only: {"chosen":[candidate numbers]} — at most ${keep}, best first; an empty list if none is good.`,
    ].join('\n');
    const lines = [
      `Seed task: ${bound(collapse(seed.task.instruction), this.maxInstructionChars)}`,
      `Wanted: variations one notch ${direction.toUpperCase()} than the seed.`,
      'Candidates:',
      ...shown.map(
        (c, i) => `${i + 1}. ${c.instruction}${c.rationale ? ` (${bound(c.rationale, this.rationaleChars)})` : ''}`,
      ),
      `Pick at most ${keep}: distinct from each other and from the seed, plausible and solvable in this environment, concrete, and truly ${direction}.`,
    ];
    return {
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: lines.join('\n') },
      ],
      jsonSchema: selectionSchema(shown.length, keep),
    };
  }

  /** Variations of every seed, in seed order; never throws for a bad answer. */
  async generate(seeds: readonly VariationSeed[], context: GenerateContext): Promise<GenerateResult> {
    const index = new DuplicateIndex(this.similarity);
    for (const k of context.known ?? []) index.add(k.instruction, k.id);
    for (const s of seeds) index.add(s.task.instruction, s.task.id);
    const tasks: Task[] = [];
    let invalid = 0;
    for (const seed of seeds) {
      const made = await this.vary(seed, index, context);
      invalid += made.invalid;
      for (const t of made.tasks) {
        index.add(t.instruction, t.id);
        tasks.push(t);
      }
    }
    this.stats.tasks += tasks.length;
    return { tasks, invalid };
  }

  private async vary(seed: VariationSeed, index: DuplicateIndex, context: GenerateContext): Promise<GenerateResult> {
    const direction = LlmTaskGenerator.direction(seed);
    const seedNorm = normaliseInstruction(seed.task.instruction);
    const rng = Rng.fromSeed(this.seed, 'llm-variations', String(context.iteration), seed.task.id);
    const requestSeed = rng.split('request').nextUint32() & 0x7fffffff;
    // 1. Variation prompt; a candidate that fails its own checks is dropped; none left = a broken answer.
    const dropped = { schema: 0, direction: 0, duplicates: 0 };
    const prompt = this.variationPrompt(seed, context.examples);
    const variations = await this.ask(
      prompt,
      this.maxTokens,
      this.temperature,
      requestSeed,
      (text) => {
        const parsed = parseVariationAnswer(text, this.candidates);
        if (!parsed.ok) return parsed;
        const local = new DuplicateIndex(this.similarity);
        const kept: Candidate[] = [];
        const reasons: string[] = [];
        for (const c of parsed.value) {
          const problem = this.checkCandidate(c, seedNorm);
          if (problem) {
            dropped.schema++;
            reasons.push(problem);
            continue;
          }
          if (c.difficultyChange !== direction) {
            dropped.direction++;
            reasons.push(`difficulty_change "${c.difficultyChange}" is not "${direction}"`);
            continue;
          }
          const id = llmTaskId(seed.task.env, c.instruction);
          const dup = index.duplicate(c.instruction, id) ?? local.duplicate(c.instruction, id);
          if (dup) {
            dropped.duplicates++;
            reasons.push(dup);
            continue;
          }
          local.add(c.instruction, id);
          kept.push(c);
        }
        if (kept.length === 0)
          return {
            ok: false,
            kind: 'inconsistent',
            reason: `every candidate was rejected (${[...new Set(reasons)].slice(0, 3).join('; ')})`,
          };
        return { ok: true, value: kept };
      },
      context.signal,
    );
    this.stats.candidates += variations.candidates;
    this.stats.rejectedSchema += dropped.schema;
    this.stats.rejectedDirection += dropped.direction;
    this.stats.duplicates += dropped.duplicates;
    if (!variations.value) {
      this.recordInvalid(context.iteration, seed.task.id, 'variation', variations);
      return { tasks: [], invalid: 1 };
    }
    // 2. Selection, over the survivors in a seeded random order.
    const shown = rng.split('order').shuffle(variations.value.slice());
    const select = this.selectionPrompt(seed, shown);
    const keep = Math.min(this.keep, shown.length);
    const chosen = await this.ask(
      select,
      this.selectionMaxTokens,
      0,
      requestSeed,
      (text) => parseSelectionAnswer(text, shown.length, keep),
      context.signal,
    );
    if (!chosen.value) {
      this.recordInvalid(context.iteration, seed.task.id, 'selection', chosen);
      return { tasks: [], invalid: 1 };
    }
    this.stats.notSelected += shown.length - chosen.value.length;
    const tasks = chosen.value.map((n): Task => {
      const c = shown[n - 1];
      return {
        id: llmTaskId(seed.task.env, c.instruction),
        env: seed.task.env,
        instruction: c.instruction,
        difficulty: seed.task.difficulty,
        origin: 'llm',
        parent: seed.task.id,
      };
    });
    return { tasks, invalid: 0 };
  }

  /** A candidate's own problems (empty, too short or long, the seed itself), or null. */
  checkCandidate(c: Candidate, seedNorm: string): string | null {
    if (!c.instruction) return 'an empty instruction';
    if (c.instruction.length < this.minInstructionChars)
      return `an instruction under ${this.minInstructionChars} characters`;
    if (c.instruction.length > this.maxInstructionChars)
      return `an instruction over ${this.maxInstructionChars} characters`;
    if (normaliseInstruction(c.instruction).length === 0) return 'an instruction without words';
    if (normaliseInstruction(c.instruction) === seedNorm) return 'a copy of the seed task';
    return null;
  }

  private recordInvalid(
    iteration: number,
    seedTaskId: string,
    step: InvalidAnswer['step'],
    settled: Asked<unknown>,
  ): void {
    this.stats.invalidAnswers++;
    this.invalidLog.push({
      iteration,
      seedTaskId,
      step,
      reason: settled.reason ?? 'no usable answer',
      raw: bound(settled.raw, 800),
    });
    if (this.invalidLog.length > this.invalidLogSize)
      this.invalidLog.splice(0, this.invalidLog.length - this.invalidLogSize);
  }

  /** Calls the model with bounded retries until `check` accepts an answer (ask-json.ts), counting calls and tokens. */
  private async ask<T>(
    prompt: JsonPrompt,
    maxTokens: number,
    temperature: number,
    seed: number,
    check: (text: string) => ParseOutcome<T>,
    signal?: AbortSignal,
  ): Promise<Asked<T> & { candidates: number }> {
    let candidates = 0;
    const asked = await askJson(
      this.chat,
      prompt,
      (text) => {
        candidates += parseVariationCount(text);
        return check(text);
      },
      { maxTokens, temperature, seed, retries: this.retries, signal },
    );
    this.stats.calls += asked.attempts;
    this.stats.retries += asked.attempts - 1;
    this.stats.promptTokens += asked.usage.promptTokens;
    this.stats.completionTokens += asked.usage.completionTokens;
    return { ...asked, candidates };
  }
}

/** How many variations an answer holds (0 when it has none): for the candidate count. */
function parseVariationCount(text: string): number {
  const json = extractJson(text);
  return json.ok && Array.isArray(json.value.variations) ? json.value.variations.length : 0;
}
