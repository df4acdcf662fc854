// Tables the goals of the runs imported-domains.sh makes — figures: docs/results/imported-domains.md.
/**
 * The goals table of docs/results/imported-domains.md from the files scripts/measure/imported-domains.sh
 * writes: per dataset, the import, the experience model, behaviour cloning and the dream agent;
 * then real GRPO on the same test tasks, and the ratios. It reads only what the runs saved.
 *
 *   node --import tsx scripts/measure/imported-domains-table.ts [OUT]      (default runs/imported-domains)
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const out = process.argv[2] ?? 'runs/imported-domains';
const DATASETS = ['hh40eto', 'hh200eto', 'hh200agentgym', 'hh1000eto', 'hh1000agentgym'];
const AGENTS = ['bc', 'bc-then-dream'];

/** The last line of a --json output that parses, or null. */
function lastJson(path: string): Json | null {
  if (!existsSync(path)) return null;
  const lines = readFileSync(path, 'utf8').trim().split('\n').reverse();
  for (const line of lines) {
    try {
      return JSON.parse(line) as Json;
    } catch {
      continue;
    }
  }
  return null;
}

/** The wall seconds, peak memory and exit status /usr/bin/time wrote, or null. */
function timeOf(path: string): { wall: number; peakMb: number; exit: number } | null {
  if (!existsSync(path)) return null;
  const m = /wall_s ([\d.]+) peak_kb (\d+) exit (\d+)/.exec(readFileSync(path, 'utf8'));
  return m ? { wall: Number(m[1]), peakMb: Math.round(Number(m[2]) / 1024), exit: Number(m[3]) } : null;
}

function readJson(path: string): Json | null {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Json) : null;
}

const pct = (x: number | undefined) => (x === undefined ? '—' : `${(x * 100).toFixed(0)} %`);
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;

function dataRow(name: string): string | null {
  const logs = join(out, 'logs', name);
  const imported = lastJson(join(logs, 'import.out'));
  const model = lastJson(join(logs, 'expmodel.out'));
  if (!imported || !model) return null;
  const importTime = timeOf(join(logs, 'import.time'));
  const modelTime = timeOf(join(logs, 'expmodel.time'));
  const head = model.verdict_head as Json | null;
  return row([
    name,
    `${imported.episodes} (${imported.train_episodes} / ${imported.held_out_episodes})`,
    imported.steps,
    imported.inferred_admissible_steps > 0 ? 'inferred' : 'recorded',
    `${importTime?.wall ?? '—'} s`,
    String(model.pairs),
    `${model.epochs} (best ${model.best_epoch}), ${model.best_validation_loss}`,
    `${modelTime?.wall ?? '—'} s (${model.seconds} s training)`,
    head
      ? `${head.kind}: ${head.successes} / ${head.failures}, bal. acc. ${Number(head.balancedAccuracy).toFixed(3)}`
      : 'none',
  ]);
}

function agentSummary(name: string, agent: string): Json | null {
  return readJson(join(out, 'runs', `${name}-${agent}`, 'summary.json'));
}

function agentRow(name: string, agent: string): string | null {
  const s = agentSummary(name, agent);
  if (!s) return null;
  const time = timeOf(join(out, 'logs', name, `train-${agent}.time`));
  const real = s.eval?.real as Json | undefined;
  const dream = s.eval?.dream_success as Json | undefined;
  const agreement = s.eval?.action_agreement as Json | undefined;
  const problems = (s.problems as Json[]).map((p) => `${p.severity} ${p.kind}`).join(', ');
  return row([
    name,
    agent,
    `${s.status}${problems ? ` (${problems})` : ''}, exit ${time?.exit ?? '?'}`,
    `${s.agent.returned}: ${s.agent.reason}`,
    `${s.agent.dream_iterations}`,
    dream ? `${dream.success_rate} (${dream.episodes}), ${dream.mean_length}, ${dream.first_step_share}` : '—',
    agreement ? `${agreement.agreement} vs ${agreement.chance} (${agreement.usable_steps})` : '—',
    real ? `**${pct(real.success_rate)}** (${real.episodes} ${real.split}, d ${real.difficulty})` : '—',
    real ? String(real.mean_steps) : '—',
    `${time?.wall ?? '—'} s`,
  ]);
}

/** The real test success of a dataset's agent over the domain-train seeds run (0, then SEED=1, 2 …). */
function seedSuccesses(name: string, agent: string): number[] {
  const found: number[] = [];
  for (const suffix of ['', '-s1', '-s2', '-s3', '-s4']) {
    const success = readJson(join(out, 'runs', `${name}-${agent}${suffix}`, 'summary.json'))?.eval?.real?.success_rate;
    if (typeof success === 'number') found.push(success);
  }
  return found;
}

function meanStd(xs: number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
  const variance = xs.length > 1 ? xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1) : 0;
  return { mean, std: Math.sqrt(variance) };
}

const percent = (xs: number[]) => {
  const { mean, std } = meanStd(xs);
  return `${xs.map((x) => (x * 100).toFixed(0)).join(' / ')} (${(mean * 100).toFixed(1)} ± ${(std * 100).toFixed(1)})`;
};

/** Real GRPO's runs at household-medium, from scratch (`grpo`) or from the SFT policy (`grpo-sft`). */
function grpoRuns(kind: 'grpo' | 'grpo-sft'): Json[] {
  const runs: Json[] = [];
  for (const seed of [1, 2, 3]) {
    const s = readJson(join(out, 'runs', `${kind}-household-medium-${seed}`, 'summary.json'));
    if (s) runs.push({ ...s, time: timeOf(join(out, 'logs', 'grpo', `${kind}-${seed}.time`)) });
  }
  return runs;
}

const lines: string[] = [];
const dataHeader = ['dataset', 'episodes (train / held out)', 'steps', 'candidates', 'import wall', 'pairs'];
lines.push(row([...dataHeader, 'epochs, val. loss', 'expmodel wall', 'verdict head']));
lines.push(row(Array(9).fill('---')));
for (const name of DATASETS) {
  const r = dataRow(name);
  if (r) lines.push(r);
}
lines.push('');
lines.push(
  row([
    'dataset',
    'agent',
    'status',
    'returned',
    'dream it.',
    'dream success (tasks), length, first-step share',
    'agreement vs chance (steps)',
    'real',
    'mean steps',
    'wall',
  ]),
);
lines.push(row(Array(10).fill('---')));
for (const name of DATASETS)
  for (const agent of AGENTS)
    for (const suffix of ['', '-s1', '-s2']) {
      const r = agentRow(name, `${agent}${suffix}`);
      if (r) lines.push(r);
    }
lines.push('');
for (const kind of ['grpo', 'grpo-sft'] as const) {
  const runs = grpoRuns(kind);
  for (const g of runs)
    lines.push(
      `${kind} seed ${g.seed}: ${JSON.stringify(g.eval)}, dev ${JSON.stringify(g.eval_dev)}, ` +
        `real steps ${g.real_steps}, iterations ${g.iterations}, wall ${g.time?.wall ?? '—'} s`,
    );
  if (runs.length > 0) lines.push(`${kind}: test success ${percent(runs.map((g) => g.eval.success as number))}`);
}
lines.push('');
const reference = meanStd(grpoRuns('grpo').map((g) => g.eval.success as number)).mean;
const ratio = (x: number) => (reference > 0 ? (x / reference).toFixed(2) : `undefined (real GRPO ${reference})`);
lines.push(row(['dataset', 'BC: real test success, seeds', 'dream agent: seeds', 'dream − BC', 'dream / real GRPO']));
lines.push(row(Array(5).fill('---')));
for (const name of DATASETS) {
  const bc = seedSuccesses(name, 'bc');
  const dream = seedSuccesses(name, 'bc-then-dream');
  if (dream.length === 0) continue;
  const gap = bc.length > 0 ? ((meanStd(dream).mean - meanStd(bc).mean) * 100).toFixed(1) : '—';
  lines.push(row([name, bc.length ? percent(bc) : '—', percent(dream), `${gap} points`, ratio(meanStd(dream).mean)]));
}
console.log(lines.filter((l, i, all) => l !== '' || all[i - 1] !== '').join('\n'));
