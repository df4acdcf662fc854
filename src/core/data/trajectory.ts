/**
 * Our trajectory JSONL format: one episode a line, keys in a fixed order so the same episode is
 * always the same bytes (datasets are reproducible byte for byte).
 */
import type { Step, Task, TaskOrigin, Trajectory, TrajectorySource } from '../types';
import { DatasetImportError, RecordChecker, parseJsonLines, type ImportProblem } from './errors';

export const TRAJECTORY_FORMAT = 'dreamgym-trajectory/1' as const;
const TASK_ORIGINS: readonly TaskOrigin[] = ['generated', 'variation', 'llm', 'imported'];
const SOURCES: readonly TrajectorySource[] = [
  'expert',
  'random',
  'noisy-expert',
  'decoy-expert',
  'agent',
  'imported',
  'dream',
];
const TERMINATE_REASONS = ['success', 'terminated', 'truncated', 'unfinished'] as const;

/** A canonical copy with keys in the documented order (so JSON.stringify is stable). */
export function canonicalTrajectory(t: Trajectory): Trajectory {
  const task: Task = {
    id: t.task.id,
    env: t.task.env,
    instruction: t.task.instruction,
    difficulty: t.task.difficulty,
    origin: t.task.origin,
    ...(t.task.seed !== undefined ? { seed: t.task.seed } : {}),
    ...(t.task.parent !== undefined ? { parent: t.task.parent } : {}),
    ...(t.task.spec !== undefined ? { spec: t.task.spec } : {}),
  };
  const steps: Step[] = t.steps.map((s) => ({
    observation: s.observation,
    admissible: s.admissible,
    ...(s.thought !== undefined ? { thought: s.thought } : {}),
    action: s.action,
    reward: s.reward,
    terminated: s.terminated,
    truncated: s.truncated,
    valid: s.valid,
  }));
  return {
    format: TRAJECTORY_FORMAT,
    id: t.id,
    env: t.env,
    seed: t.seed,
    source: t.source,
    ...(t.policy !== undefined ? { policy: t.policy } : {}),
    task,
    steps,
    final_observation: t.final_observation,
    result: {
      reward: t.result.reward,
      success: t.result.success,
      score: t.result.score,
      steps: t.result.steps,
      terminate_reason: t.result.terminate_reason,
    },
  };
}

export function trajectoryToJsonLine(t: Trajectory): string {
  return JSON.stringify(canonicalTrajectory(t));
}

export function trajectoriesToJsonl(ts: readonly Trajectory[]): string {
  return ts.map((t) => trajectoryToJsonLine(t) + '\n').join('');
}

export interface ParseOptions {
  /** Environment ids the records may name (the registry's, plus imported domains). */
  knownEnvs?: readonly string[];
  /** Shown in errors, e.g. the file name. */
  sourceName?: string;
}

/** Validates one parsed record; pushes problems and returns the trajectory when it is sound. */
export function checkTrajectoryRecord(
  value: unknown,
  check: RecordChecker,
  knownEnvs?: readonly string[],
): Trajectory | undefined {
  const record = check.object(value, '');
  if (!record) return undefined;
  const before = check.problems.length;
  if (record.format !== undefined && record.format !== TRAJECTORY_FORMAT) {
    check.problem(
      'format',
      `unknown format '${String(record.format)}'; this reader understands '${TRAJECTORY_FORMAT}'`,
    );
  }
  const id = check.string(record.id, 'id', { nonEmpty: true });
  const env = check.string(record.env, 'env', { nonEmpty: true });
  if (env !== undefined && knownEnvs && !knownEnvs.includes(env)) {
    check.problem(
      'env',
      `unknown environment '${env}'; known: ${knownEnvs.join(', ')} ` +
        "(another application's file is imported as a domain: the Domains page, or dreamgym domain import)",
    );
  }
  const seed = check.number(record.seed, 'seed', { integer: true });
  const source = check.oneOf(record.source, 'source', SOURCES);
  const policy = record.policy === undefined ? undefined : check.object(record.policy, 'policy');
  const taskRecord = check.object(record.task, 'task');
  let task: Task | undefined;
  if (taskRecord) {
    const taskId = check.string(taskRecord.id, 'task.id', { nonEmpty: true });
    const taskEnv = check.string(taskRecord.env, 'task.env', { nonEmpty: true });
    if (taskEnv !== undefined && env !== undefined && taskEnv !== env)
      check.problem('task.env', `'${taskEnv}' differs from the episode's env '${env}'`);
    const instruction = check.string(taskRecord.instruction, 'task.instruction', { nonEmpty: true });
    const difficulty = check.number(taskRecord.difficulty, 'task.difficulty');
    if (difficulty !== undefined && (difficulty < 0 || difficulty > 1))
      check.problem('task.difficulty', `must be within 0..1, got ${difficulty}`);
    const origin = check.oneOf(taskRecord.origin, 'task.origin', TASK_ORIGINS);
    const taskSeed = check.number(taskRecord.seed, 'task.seed', { optional: true, integer: true });
    const parent = check.string(taskRecord.parent, 'task.parent', { optional: true });
    if (
      taskId !== undefined &&
      taskEnv !== undefined &&
      instruction !== undefined &&
      difficulty !== undefined &&
      origin !== undefined
    ) {
      task = {
        id: taskId,
        env: taskEnv,
        instruction,
        difficulty,
        origin,
        ...(taskSeed !== undefined ? { seed: taskSeed } : {}),
        ...(parent !== undefined ? { parent } : {}),
        ...(taskRecord.spec !== undefined ? { spec: taskRecord.spec } : {}),
      };
    }
  }
  const stepRecords = check.array(record.steps, 'steps');
  const steps: Step[] = [];
  stepRecords?.forEach((raw, i) => {
    const f = `steps[${i}]`;
    const s = check.object(raw, f);
    if (!s) return;
    const observation = check.string(s.observation, `${f}.observation`);
    const admissible = check.stringArray(s.admissible, `${f}.admissible`);
    const thought = check.string(s.thought, `${f}.thought`, { optional: true });
    const action = check.string(s.action, `${f}.action`);
    const reward = check.number(s.reward, `${f}.reward`);
    const terminated = check.boolean(s.terminated, `${f}.terminated`);
    const truncated = check.boolean(s.truncated, `${f}.truncated`);
    const valid = check.boolean(s.valid, `${f}.valid`);
    if (terminated && truncated) check.problem(`${f}.truncated`, 'terminated and truncated cannot both be true');
    if (
      observation !== undefined &&
      admissible &&
      action !== undefined &&
      reward !== undefined &&
      terminated !== undefined &&
      truncated !== undefined &&
      valid !== undefined
    ) {
      steps.push({
        observation,
        admissible,
        ...(thought !== undefined ? { thought } : {}),
        action,
        reward,
        terminated,
        truncated,
        valid,
      });
    }
  });
  const finalObservation = check.string(record.final_observation, 'final_observation');
  const resultRecord = check.object(record.result, 'result');
  let result: Trajectory['result'] | undefined;
  if (resultRecord) {
    const reward = check.number(resultRecord.reward, 'result.reward');
    const success = check.boolean(resultRecord.success, 'result.success');
    const score = check.number(resultRecord.score, 'result.score');
    const nSteps = check.number(resultRecord.steps, 'result.steps', { integer: true });
    const reason = check.oneOf(resultRecord.terminate_reason, 'result.terminate_reason', TERMINATE_REASONS);
    if (nSteps !== undefined && stepRecords && nSteps !== stepRecords.length) {
      check.problem('result.steps', `says ${nSteps} but the episode has ${stepRecords.length} steps`);
    }
    if (
      reward !== undefined &&
      success !== undefined &&
      score !== undefined &&
      nSteps !== undefined &&
      reason !== undefined
    ) {
      result = { reward, success, score, steps: nSteps, terminate_reason: reason };
    }
  }
  if (check.problems.length > before) return undefined;
  return {
    format: TRAJECTORY_FORMAT,
    id: id!,
    env: env!,
    seed: seed!,
    source: source!,
    ...(policy !== undefined ? { policy } : {}),
    task: task!,
    steps,
    final_observation: finalObservation!,
    result: result!,
  };
}

/** Parses our JSONL; any problem rejects the whole file (DatasetImportError lists them all). */
export function parseTrajectoriesJsonl(text: string, options: ParseOptions = {}): Trajectory[] {
  const problems: ImportProblem[] = [];
  const rows = parseJsonLines(text, problems);
  const out: Trajectory[] = [];
  for (const { line, value } of rows) {
    const t = checkTrajectoryRecord(value, new RecordChecker(line, problems), options.knownEnvs);
    if (t) out.push(t);
  }
  if (rows.length === 0 && problems.length === 0)
    problems.push({ line: 1, field: '', message: 'the file holds no records' });
  if (problems.length > 0) throw new DatasetImportError(options.sourceName ?? 'the file', problems);
  return out;
}
