/**
 * The experiment's results as markdown (table1.md, table2.md, grid.md, transfer.md): the tables
 * `dreamgym experiment` writes. The numbers come from src/core/experiments/; the wording,
 * the layout and the wall-clock facts only the edge knows are here.
 */
import { describeSplit } from '../../core/train/evaluate';
import type {
  EnvSetup,
  GridResult,
  RowRatio,
  Stat,
  TableResult,
  TransferResult,
} from '../../core/experiments/experiment';
import type { RunProvenance } from './job-cache';

const pct = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : '–');

/**
 * Text a report quotes (a model path, an output folder), safe in markdown prose and table cells:
 * markdown's punctuation is backslash-escaped (a `|` would split a cell), HTML's `<`, `>` and `&`
 * become entities (a `<img onerror>` would run in a viewer), and line breaks become spaces.
 */
export function markdownText(text: string): string {
  return text
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** `text` as one markdown code span, whatever backticks it holds (fenced by a longer run of them). */
export function inlineCode(text: string): string {
  const flat = text.replace(/[\r\n\t]+/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = /^[ `]|[ `]$/.test(flat) ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** One argument as a POSIX shell reads it back: as is when it is plain, else single-quoted. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The 95 % interval of a mean rate in percent, `[lo, hi]`, cut to 0…100 ('–' below two seeds). */
export function formatInterval(s: Stat): string {
  const clip = (x: number) => Math.min(1, Math.max(0, x));
  return s.ci95 ? `[${pct(clip(s.ci95[0]))}, ${pct(clip(s.ci95[1]))}]` : '–';
}

/** Every seed's value in percent, in seed order. */
export function formatSeeds(s: Stat): string {
  return s.values.length > 1 ? s.values.map(pct).join(' / ') : '–';
}

/** `mean ± sample std` in percent (just the mean for a single seed). */
export function formatStat(s: Stat, percent = true): string {
  if (s.values.length === 0) return '–';
  const f = (x: number) => (percent ? pct(x) : Math.round(x).toString());
  return s.values.length === 1 ? f(s.mean) : `${f(s.mean)} ± ${f(s.std)}`;
}

function setupLine(s: EnvSetup): string {
  return `### ${s.env} — preset ${s.preset} (difficulty ${s.difficulty}, ${s.heldOutTasks} held-out tasks of the ${describeSplit(s.split, s.heldOutTasks)}, ${s.iterations} iterations × ${s.tasksPerIteration} tasks × ${s.groupSize} rollouts, real budget ${s.realStepBudget} steps, S2R real phase ${s.s2rRealBudget} steps)`;
}

function seedsText(seeds: number[]): string {
  return seeds.length === 1
    ? '1 seed: no spread'
    : `mean ± sample std over ${seeds.length} seeds (${seeds.join(', ')}), 95 % t-interval of the mean`;
}

const SUCCESS_COLUMNS = ['held-out success %', '95 % interval', 'per seed'];
const TABLE1_COLUMNS = ['method', 'experience', ...SUCCESS_COLUMNS, 'held-out score %', 'real train steps'].concat([
  'dream steps',
  'wall s',
]);
const TABLE2_COLUMNS = [
  'variant',
  'setting changed',
  ...SUCCESS_COLUMNS,
  'Δ vs full (points)',
  'held-out score %',
].concat(['real train steps', 'dream steps', 'note']);

function markdownRow(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** A row's success: mean ± sample std, the 95 % interval, and each seed's value. */
function successCells(s: Stat): string[] {
  return [formatStat(s), formatInterval(s), formatSeeds(s)];
}

function ratioLines(ratios: RowRatio[]): string[] {
  if (!ratios.length) return [];
  const lines = ['| ratio of mean held-out success | ratio | 95 % interval (delta method) |', '| --- | ---: | ---: |'];
  for (const r of ratios) {
    const interval = r.ci95 ? `[${r.ci95[0].toFixed(2)}, ${r.ci95[1].toFixed(2)}]` : '–';
    lines.push(`| ${r.row} / ${r.against} | ${Number.isFinite(r.ratio) ? r.ratio.toFixed(2) : '–'} | ${interval} |`);
  }
  return [...lines, ''];
}

/** Wall-clock facts the edge knows (the core keeps no clock of its own). */
export interface RunTiming {
  elapsedSeconds: number;
  workers: number;
  cpus?: number;
}

function minutes(seconds: number): string {
  return `${seconds.toFixed(0)} s (${(seconds / 60).toFixed(1)} min)`;
}

function timingText(computeSeconds: number, timing?: RunTiming): string {
  const compute = `Compute: ${minutes(computeSeconds)}, the sum of the runs' wall times.`;
  if (!timing) return compute;
  return `${compute} Elapsed: ${minutes(timing.elapsedSeconds)} for the whole command, ${timing.workers} worker process${timing.workers === 1 ? '' : 'es'}${timing.cpus ? ` on ${timing.cpus} CPU cores` : ''}.`;
}

export function renderTable(result: TableResult, timing?: RunTiming): string {
  const lines: string[] = [];
  if (result.table === 1) {
    lines.push(
      `## Table 1 — held-out success per method (${result.split} split; ${seedsText(result.seeds)})`,
      '',
      `Experience model of the dream and S2R rows: **${markdownText(result.experienceModel)}**${result.oracle ? ' — the noisy oracle, a control instrument, not a learned model' : ''}.`,
      '',
    );
    for (const { setup, rows, ratios } of result.envs) {
      lines.push(
        setupLine(setup),
        '',
        markdownRow(TABLE1_COLUMNS),
        markdownRow(TABLE1_COLUMNS.map((_, i) => (i < 2 ? '---' : '---:'))),
      );
      for (const r of rows) {
        const experience =
          r.kind === 'baseline' ? '–' : r.mode === 'real' ? 'real env' : markdownText(r.experienceModel ?? '–');
        lines.push(
          markdownRow([
            r.label,
            experience,
            ...successCells(r.success),
            formatStat(r.score),
            formatStat(r.realSteps, false),
            formatStat(r.dreamSteps, false),
            r.wallSeconds.mean.toFixed(1),
          ]),
        );
      }
      lines.push('', ...ratioLines(ratios ?? []));
    }
  } else {
    lines.push(
      `## Table 2 — ${result.ablations === 'pessimism' ? "what keeps the dream honest: the pessimism's parts" : 'ablations of DreamGym'} ` +
        `(dream GRPO; ${result.split} split; ${seedsText(result.seeds)})`,
      '',
      `Experience model: **${markdownText(result.experienceModel)}**${result.oracle ? ' — the noisy oracle, a control instrument, not a learned model' : ''}.`,
      '',
    );
    for (const { setup, rows } of result.envs) {
      const full = rows.find((r) => r.id === 'full')!;
      lines.push(
        setupLine(setup),
        '',
        markdownRow(TABLE2_COLUMNS),
        markdownRow(TABLE2_COLUMNS.map((_, i) => (i < 2 || i === TABLE2_COLUMNS.length - 1 ? '---' : '---:'))),
      );
      for (const r of rows) {
        const changes =
          r.changes && Object.keys(r.changes).length
            ? Object.entries(r.changes)
                .map(([k, v]) => `${k} = ${v}`)
                .join(', ')
            : r.id === 'full'
              ? '–'
              : 'LLM action prior off';
        const delta =
          r.kind === 'not-applicable' || r.id === 'full'
            ? '–'
            : (100 * (r.success.mean - full.success.mean)).toFixed(1);
        const note = r.kind === 'not-applicable' ? `**N/A** — ${r.note}` : (r.note ?? '');
        lines.push(
          markdownRow([
            r.label,
            changes,
            ...(r.kind === 'not-applicable' ? ['N/A', '–', '–'] : successCells(r.success)),
            delta,
            r.kind === 'not-applicable' ? 'N/A' : formatStat(r.score),
            formatStat(r.realSteps, false),
            formatStat(r.dreamSteps, false),
            note,
          ]),
        );
      }
      lines.push('');
    }
  }
  lines.push('Notes:', ...result.notes.map((n) => `- ${n}`), '', timingText(result.computeSeconds, timing), '');
  return lines.join('\n');
}

export function renderGrid(result: GridResult, timing?: RunTiming): string {
  const lines = [
    `## Transfer-bound grid — final held-out real success % of dream GRPO over the noisy oracle (${result.split} split; ${seedsText(result.seeds)})`,
    '',
  ];
  const top = result.epsilons[result.epsilons.length - 1];
  for (const e of result.envs) {
    lines.push(
      setupLine(e.setup),
      '',
      `| ε_R \\ ε_P | ${result.epsilons.join(' | ')} |`,
      `| --- | ${result.epsilons.map(() => '---:').join(' | ')} |`,
    );
    for (const row of e.cells)
      lines.push(`| **${row[0].epsilonReward}** | ${row.map((c) => formatStat(c.success)).join(' | ')} |`);
    lines.push(
      '',
      `- clean (0, 0): ${pct(e.clean)}; reward error only (${top}, 0): ${pct(e.rewardOnly)}; transition error only (0, ${top}): ${pct(e.transitionOnly)}.`,
      `- ε_R = ${top} row mean ${pct(e.rewardRowMean)} vs ε_P = ${top} column mean ${pct(e.transitionColumnMean)} (tolerance ±${pct(e.tolerance)}): **${e.verdict}**.`,
      '',
    );
  }
  lines.push('Notes:', ...result.notes.map((n) => `- ${n}`), '', timingText(result.computeSeconds, timing), '');
  return lines.join('\n');
}

export function renderTransfer(result: TransferResult, timing?: RunTiming): string {
  const lines = [
    `## Cross-domain transfer — held-out real success % (score %) (${result.split} split; ${seedsText(result.seeds)})`,
    '',
    `Experience model: **${markdownText(result.experienceModel)}**.`,
    '',
    `| trained in ↓ / evaluated in → | ${result.targets.map((t) => `${t.env} (${t.preset}, ${t.heldOutTasks} tasks)`).join(' | ')} |`,
    `| --- | ${result.targets.map(() => '---:').join(' | ')} |`,
  ];
  for (const r of result.rows) {
    lines.push(
      `| ${r.label} | ${result.targets.map((t) => `${formatStat(r.success[t.env])} (${formatStat(r.score[t.env])})${t.env === r.trainedIn ? ' *in-domain*' : ''}`).join(' | ')} |`,
    );
  }
  lines.push(
    `| random policy (reference) | ${result.targets.map((t) => `${formatStat(result.random.success[t.env])} (${formatStat(result.random.score[t.env])})`).join(' | ')} |`,
  );
  lines.push('', 'Notes:', ...result.notes.map((n) => `- ${n}`), '', timingText(result.computeSeconds, timing), '');
  return lines.join('\n');
}

/** What a reported table says about where its numbers came from. */
export interface ReportFacts {
  /** The command line, each argument shell-quoted (`shellQuote`). */
  command: string;
  date: Date;
  /** Where each job's outcome was computed (earlier runs of the command, and this one). */
  provenances: RunProvenance[];
  jobs: number;
  reused: number;
  runs: string;
}

/** A reported table (docs/results/table<N>-<envs>.md): the command, machine, date and code above the table. */
function runsProvenance(jobs: number, reused: number): string {
  const kept = 'read from earlier runs of the same request (same datasets and model files)';
  if (reused === 0) return 'all ran in this command';
  if (reused === jobs) return `all were ${kept}`;
  return `${reused} were ${kept}, ${jobs - reused} ran in this command`;
}

export function renderReport(table: string, facts: ReportFacts): string {
  const count = (values: string[]) => {
    const tally = new Map<string, number>();
    for (const v of values) tally.set(v, (tally.get(v) ?? 0) + 1);
    return [...tally].map(([v, n]) => `${v} (${n} run${n === 1 ? '' : 's'})`).join('; ');
  };
  const code = count(
    facts.provenances.map(
      (p) => `commit ${p.commit}, src tree ${p.sourceTree}${p.dirty ? ' with uncommitted changes' : ''}`,
    ),
  );
  return [
    '<!-- Written by `experiment --report` (npm run results); edit the code, not this file. -->',
    '',
    `Regenerate: ${inlineCode(facts.command)}`,
    '',
    `- Written: ${facts.date.toISOString()}.`,
    `- Machine: ${count(facts.provenances.map((p) => p.machine))}.`,
    `- Code: ${code}.`,
    `- Runs: ${facts.jobs} jobs kept in ${inlineCode(facts.runs)}; ${runsProvenance(facts.jobs, facts.reused)}.`,
    '',
    table,
  ].join('\n');
}
