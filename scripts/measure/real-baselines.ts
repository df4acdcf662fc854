// Measures real-env GRPO, PPO and REINFORCE beside random and expert — figures: none in docs/results (--out FILE).
/**
 * The real-environment baseline table (issue 3): GRPO, PPO and REINFORCE on a preset, several
 * seeds each, next to random and expert rows on the same held-out tasks.
 *   node --import tsx scripts/measure/real-baselines.ts webshop-easy household-easy [--seeds 3] [--out FILE.md]
 */
import { writeFileSync } from 'node:fs';
import { initBackend } from '../../src/core/tfjs/backend';
import { getPreset } from '../../src/core/train/config';
import { Trainer } from '../../src/core/train/loop';
import { HELD_OUT_SEED_BASE } from '../../src/core/envs/env';
import { getEnvDefinition, makeEnv } from '../../src/core/envs/registry';
import { makeBaselinePolicy, rolloutEpisode } from '../../src/core/data/rollout';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const presets = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
const seeds = Number(flag('seeds', '3'));
const out = flag('out', '');
await initBackend('wasm');

const stats = (xs: number[]) => {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const std = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  return `${(100 * mean).toFixed(1)} ± ${(100 * std).toFixed(1)}`;
};
const lines: string[] = [];
for (const presetName of presets) {
  const preset = getPreset(presetName);
  const definition = getEnvDefinition(preset.env);
  lines.push(
    `### ${presetName} (${preset.env}, difficulty ${preset.difficulty}, ${preset.finalEvalEpisodes} held-out tasks, budget ${preset.realStepBudget} real steps)`,
    '',
    '| policy | held-out success % (mean ± std over seeds) | held-out score % | real steps (mean) | wall s (mean) |',
    '| --- | ---: | ---: | ---: | ---: |',
  );
  for (const name of ['random', 'expert'] as const) {
    const env = makeEnv(preset.env);
    const policy = makeBaselinePolicy(name);
    const success: number[] = [],
      score: number[] = [];
    for (let seed = 1; seed <= (name === 'random' ? seeds : 1); seed++) {
      let s = 0,
        sc = 0;
      for (let i = 0; i < preset.finalEvalEpisodes; i++) {
        const taskSeed = HELD_OUT_SEED_BASE + i;
        const t = await rolloutEpisode(env, policy, {
          seed: taskSeed + seed * 7919,
          task: definition.generateTask(taskSeed, preset.difficulty),
        });
        s += t.result.success ? 1 : 0;
        sc += t.result.score;
      }
      success.push(s / preset.finalEvalEpisodes);
      score.push(sc / preset.finalEvalEpisodes);
    }
    lines.push(`| ${name} | ${stats(success)} | ${stats(score)} | – | – |`);
  }
  for (const algo of ['grpo', 'ppo', 'reinforce'] as const) {
    const success: number[] = [],
      score: number[] = [],
      steps: number[] = [],
      wall: number[] = [];
    for (let seed = 1; seed <= seeds; seed++) {
      const started = performance.now();
      const trainer = new Trainer({ ...preset, algo, seed, evalInterval: 0 });
      while (!trainer.finished) await trainer.runIteration();
      const evaluation = await trainer.evaluate(preset.finalEvalEpisodes);
      success.push(evaluation.success);
      score.push(evaluation.score);
      steps.push(trainer.realSteps);
      wall.push((performance.now() - started) / 1000);
      process.stderr.write(
        `${presetName} ${algo} seed ${seed}: success ${evaluation.success} after ${trainer.realSteps} steps\n`,
      );
      trainer.dispose();
    }
    const meanSteps = Math.round(steps.reduce((a, b) => a + b, 0) / steps.length);
    lines.push(
      `| ${algo.toUpperCase()} (real) | ${stats(success)} | ${stats(score)} | ${meanSteps} | ${(wall.reduce((a, b) => a + b, 0) / wall.length).toFixed(0)} |`,
    );
  }
  lines.push('');
}
console.log(lines.join('\n'));
if (out) writeFileSync(out, lines.join('\n') + '\n');
