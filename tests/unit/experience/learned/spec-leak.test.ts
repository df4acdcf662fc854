/**
 * The learned experience model never reads `task.spec` (docs/architecture.md §3.6: an experience model sees the
 * instruction, the history, the state, the action and retrieved real transitions; never the env's
 * machine-readable task). Issue 30 item 5: a test of that which can fail.
 *
 * Each dream runs in a model instance of its own with the transition cache off, so no answer is
 * shared between a task with its spec and one without (the cache key and a batch's shared rows
 * leave the spec out, which let the older test pass whatever the encoder read). Sampling is on
 * (temperature > 0): a row's draws are seeded by its own context, so any token a spec put into the
 * context changes the dream even where the most likely answer would not. The models have a verdict
 * head, so the verdict's features are read at every ending too.
 *
 * The same episodes are dreamed with every task carrying its spec, with every spec removed, with
 * each top-level spec field changed in every leaf, and with every leaf changed: the dreams (first
 * states, next states, rewards, terminations, verdict notes, raw answers) must be identical.
 *
 * Each head kind is a case (a hand-made outcome head on both envs, a hand-made goal head, the
 * shipped household model's own goal head); a new head is one more entry in CASES, with the note
 * its verdicts write.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../../src/core/tfjs/backend';
import { getEnvDefinition, makeEnv } from '../../../../src/core/envs/registry';
import { LearnedExperienceModel } from '../../../../src/core/experience/learned/learned-model';
import type { ModelManifest } from '../../../../src/core/experience/learned/model-file';
import type { NamedWeight } from '../../../../src/core/experience/learned/network';
import {
  GOAL_FEATURES,
  kindsOf,
  outcomeFeatureNames,
  shapeOf,
  type VerdictHead,
} from '../../../../src/core/experience/learned/verdict';
import { bufferFromTrajectories } from '../../../../src/core/experience/seed-buffer';
import { makeBaselinePolicy, rolloutEpisode } from '../../../../src/core/data/rollout';
import type { ReplayBuffer } from '../../../../src/core/buffer/buffer';
import { Rng } from '../../../../src/core/rng';
import type { Observation, Step, Task, Trajectory } from '../../../../src/core/types';
import { readModelFolder } from '../../../../src/node/model-folder';

/** Episodes dreamed per case, and steps per episode. */
const EPISODES = 4;
const STEPS = 12;

/**
 * An outcome head made by hand: every feature pulls p(success) down, from a bias above 0.5, so
 * the verdict (and its note) turns on what the features read.
 */
function outcomeHead(env: string): VerdictHead {
  const features = outcomeFeatureNames(env);
  const weights = [-2.5, -4, -3].slice(0, features.length);
  return {
    features,
    weights,
    bias: 2,
    fittedOn: { successes: 10, failures: 10, balancedAccuracy: 1 },
    members: [{ weights, bias: 2 }],
  };
}
const OUTCOME_HEAD = outcomeHead('webshop-lite-v0');

/** Each action shape's slots with the kinds the actions put in them. */
function slotsOf(actions: readonly string[]): Record<string, string[][]> {
  const slots: Record<string, string[][]> = {};
  for (const action of actions) {
    const kinds = kindsOf(action);
    const shape = (slots[shapeOf(action)] ??= kinds.map(() => []));
    kinds.forEach((kind, i) => shape[i].includes(kind) || shape[i].push(kind));
  }
  return slots;
}

/**
 * A goal head made by hand: a put or a use may end the episode, less likely the more of the
 * instruction's things it leaves out; its vocabulary is what the real episodes' actions name.
 */
function goalHead(real: readonly Trajectory[]): VerdictHead {
  const named = real.flatMap((t) => t.steps.flatMap((s) => [s.action, ...s.admissible]));
  const vocabulary = [...new Set(named.flatMap((a) => a.split(/\s+/).slice(1)))].filter((w) => !/\d/.test(w));
  const regression = {
    weights: [-3, -1, -2],
    bias: 2.5,
    fittedOn: OUTCOME_HEAD.fittedOn,
    words: vocabulary,
  };
  const member = { weights: regression.weights, bias: regression.bias };
  return {
    features: [...GOAL_FEATURES],
    weights: [],
    bias: 0,
    byVerb: { put: regression, use: regression },
    vocabulary: vocabulary.sort(),
    slots: slotsOf(named),
    fittedOn: OUTCOME_HEAD.fittedOn,
    members: [{ weights: [], bias: 0, byVerb: { put: member, use: member } }],
  };
}

interface LeakCase {
  name: string;
  env: string;
  /** The shipped network the case dreams with, and the verdict head put on it (given the real episodes and its own). */
  model: string;
  head: (real: readonly Trajectory[], shipped: VerdictHead | undefined) => VerdictHead;
  /** The note every verdict of this head writes (a case whose dreams show none proves nothing). */
  note: RegExp;
}

const CASES: LeakCase[] = [
  {
    name: 'webshop, outcome head',
    env: 'webshop-lite-v0',
    model: 'public/models/webshop-lite-v0',
    head: () => OUTCOME_HEAD,
    note: /^verdict head: p\(success\)/,
  },
  {
    name: 'household, outcome head',
    env: 'household-v0',
    model: 'public/models/household-v0',
    head: () => outcomeHead('household-v0'),
    note: /^verdict head: p\(success\)/,
  },
  {
    name: 'household, goal head',
    env: 'household-v0',
    model: 'public/models/household-v0',
    head: goalHead,
    note: /^goal head: p\(ends with success\)/,
  },
  {
    name: 'household, its shipped goal head',
    env: 'household-v0',
    model: 'public/models/household-v0',
    head: (_, shipped) => {
      if (!shipped)
        throw new Error('public/models/household-v0 has no verdict head: re-make it with `npm run models`.');
      return shipped;
    },
    note: /^goal head: p\(ends with success\)/,
  },
];

interface Prepared {
  manifest: ModelManifest;
  weights: NamedWeight[];
  buffer: ReplayBuffer;
  /** Held-out (dev) tasks, their real first observation and the expert's actions. */
  episodes: { task: Task; donor: Task; first: Observation; expert: string[] }[];
}

const prepared = new Map<string, Prepared>();

beforeAll(async () => {
  await initBackend('wasm');
  for (const c of CASES) prepared.set(c.name, await prepare(c));
}, 120_000);

/** The case's model files (its head put on), a small real buffer to retrieve from, and its episodes. */
async function prepare(c: LeakCase): Promise<Prepared> {
  const { manifest, weights } = await readModelFolder(c.model);
  const definition = getEnvDefinition(c.env);
  const env = makeEnv(c.env);
  const real = [];
  for (let i = 0; i < 8; i++) {
    const policy = makeBaselinePolicy(i % 2 ? 'random' : 'expert');
    real.push(await rolloutEpisode(env, policy, { seed: 700 + i, task: definition.generateTask(700 + i, 0) }));
  }
  const episodes = [];
  for (let i = 0; i < EPISODES; i++) {
    const seed = 1_000_000_000 + 300 + i; // dev seeds
    const task = definition.generateTask(seed, 0);
    const first = await makeEnv(c.env).reset({ seed, task });
    const donor = definition.generateTask(seed + 100, 0);
    episodes.push({ task, donor, first, expert: definition.solve(task).actions });
  }
  const buffer = await bufferFromTrajectories(real);
  return { manifest: { ...manifest, verdict: c.head(real, manifest.verdict) }, weights, buffer, episodes };
}

// ---- the variants of a task -------------------------------------------------------------------

/** A different value of the same shape: every leaf changed (numbers moved, strings and booleans flipped). */
function changed(value: unknown): unknown {
  if (typeof value === 'number') return value + 7;
  if (typeof value === 'string') return `${[...value].reverse().join('')} changed`;
  if (typeof value === 'boolean') return !value;
  if (value === null || value === undefined) return 'was empty';
  if (Array.isArray(value)) return value.map(changed);
  return Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, changed(v)]));
}

/** A task turned into another: `donor` is another held-out task of the same env. */
type Variant = { name: string; apply(task: Task, donor: Task): Task };

type Spec = Record<string, unknown>;
const specOf = (task: Task) => task.spec as Spec;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * A field's other value: the donor task's where it differs (a real value: words a vocabulary
 * filter keeps, ids the catalog knows), else every leaf changed.
 */
function otherValue(task: Task, donor: Task, field: string): unknown {
  const own = specOf(task)[field];
  const given = specOf(donor)[field];
  return given !== undefined && !same(given, own) ? given : changed(own);
}

/**
 * The spec removed; each top-level field given another value; every field changed; the spec of
 * another task; then the seed and id.
 */
function variantsOf(spec: unknown): Variant[] {
  const withSpec = (task: Task, next: unknown): Task => ({ ...task, spec: next });
  return [
    {
      name: 'every spec removed',
      apply: (task) => {
        const stripped = { ...task };
        delete stripped.spec;
        return stripped;
      },
    },
    ...Object.keys(spec as object).map((field): Variant => ({
      name: `spec.${field} given another value`,
      apply: (task, donor) => withSpec(task, { ...specOf(task), [field]: otherValue(task, donor, field) }),
    })),
    { name: 'every spec field changed', apply: (task) => withSpec(task, changed(task.spec)) },
    { name: "another task's spec", apply: (task, donor) => withSpec(task, donor.spec) },
    // Nor the env's other internals: the generator seed, and the id made from it.
    { name: 'seed and id changed', apply: (task) => ({ ...task, seed: (task.seed ?? 0) + 7, id: `${task.id}-other` }) },
  ];
}

// ---- dreaming ---------------------------------------------------------------------------------

/** A fresh model: its own instance, no transition cache, sampling on. */
function freshModel(p: Prepared): LearnedExperienceModel {
  return LearnedExperienceModel.fromFiles(p.manifest, p.weights, {
    buffer: p.buffer,
    transitionCache: false,
    temperature: 0.9,
    seed: 11,
  });
}

/**
 * The next action of an episode: the offered action closest to the expert's next one (same verb,
 * most words in common; the plan moves on), else a seeded draw from what the dream offers.
 */
function actionOf(e: { expert: readonly string[]; planned: number; i: number }, admissible: string[], t: number) {
  const words = (a: string) => a.split(/[\s[\]]+/).filter(Boolean);
  const wanted = e.expert[e.planned] ?? '';
  const overlap = (a: string) =>
    words(a)[0] === words(wanted)[0] ? words(a).filter((w) => words(wanted).includes(w)).length : 0;
  const best = admissible.reduce((a, b) => (overlap(b) > overlap(a) ? b : a), admissible[0]);
  if (wanted && overlap(best) > 0) {
    e.planned++;
    return best;
  }
  return Rng.fromSeed(e.i, 'spec-leak', String(t), admissible.join('|')).pick(admissible);
}

/** Everything a dream reads of one answer (a first state has only the state). */
interface Dreamed {
  at: string;
  action?: string;
  state: [string, string[]];
  reward?: number;
  terminated?: boolean;
  valid?: boolean;
  actionValid?: boolean;
  invalidReason?: string;
  score?: number;
  success?: boolean;
  notes?: string[];
  raw?: string;
}

/**
 * The episodes dreamed with every task replaced by `variant(task)` (the real first state and the
 * expert's actions stay the same): the first state the model writes, then every answer.
 */
async function dream(p: Prepared, variant: Variant['apply']): Promise<Dreamed[]> {
  const model = freshModel(p);
  const out: Dreamed[] = [];
  const running = await Promise.all(
    p.episodes.map(async (e, i) => {
      const task = variant(e.task, e.donor);
      const start = await model.initial(task);
      out.push({ at: `${i} initial`, state: [start.text, start.admissible] });
      return { i, task, expert: e.expert, planned: 0, state: { ...e.first, task }, history: [] as Step[], done: false };
    }),
  );
  for (let t = 0; t < STEPS; t++) {
    const active = running.filter((e) => !e.done && e.state.admissible.length > 0);
    const answers = await Promise.all(
      active.map(async (e) => {
        const action = actionOf(e, e.state.admissible, t);
        return { e, action, p: await model.next({ task: e.task, history: e.history, state: e.state, action }) };
      }),
    );
    for (const { e, action, p: a } of answers) {
      const { reward, terminated, valid, actionValid, invalidReason, score, success, notes, raw } = a;
      out.push({
        at: `${e.i}/${t}`,
        action,
        state: [a.next.text, a.next.admissible],
        ...{ reward, terminated, valid, actionValid, invalidReason, score, success, notes, raw },
      });
      const moved = valid && actionValid;
      const step = { observation: e.state.text, admissible: e.state.admissible, action, reward, terminated };
      e.history = [...e.history, { ...step, truncated: false, valid: moved }];
      if (moved) e.state = { ...a.next, task: e.task };
      e.done = terminated;
    }
  }
  model.dispose();
  return out;
}

describe('the learned model never reads task.spec', () => {
  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s: the same dream without the spec and with every spec field changed',
    async (_, c) => {
      const p = prepared.get(c.name)!;
      const base = await dream(p, (task) => task);
      // The dream reached endings and the verdict head judged them (else the verdict path went untested).
      const judged = base.filter((d) => d.notes?.some((n) => c.note.test(n)));
      expect(judged.length, JSON.stringify(base, null, 1)).toBeGreaterThan(0);
      for (const variant of variantsOf(p.episodes[0].task.spec)) {
        expect(await dream(p, variant.apply), `${c.name}: ${variant.name}`).toEqual(base);
      }
    },
    300_000,
  );
});
