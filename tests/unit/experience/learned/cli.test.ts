import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../../src/cli/main';
import { sealManifest } from '../../../../src/core/experience/learned/model-file';
import { captureCliOutput } from '../../support/cli-output';
import { cli } from '../../cli/run-cli';

const { out, err, lastJson } = captureCliOutput();
const dir = mkdtempSync(join(tmpdir(), 'dreamgym-expmodel-'));

/** `rollout household-v0 --policy expert`: `episodes` episodes from `seed`, written to `out`. */
async function expertEpisodes(out: string, episodes: number, seed: number): Promise<void> {
  expect(await cli`rollout household-v0 --policy expert --episodes ${episodes} --seed ${seed} --out ${out}`).toBe(0);
}

describe('dreamgym expmodel', () => {
  it('trains a model from a dataset, then audit and dream use it with --llm learned:DIR', async () => {
    const data = join(dir, 'episodes.jsonl');
    await expertEpisodes(data, 8, 40);
    const model = join(dir, 'model');
    expect(
      await cli`expmodel train --env household-v0 --dataset ${data} --out ${model} --epochs 1 --d-model 16 --json`,
    ).toBe(0);
    const trained = lastJson();
    expect(trained.data.trainEpisodes + trained.data.validationEpisodes).toBe(8);
    expect(existsSync(join(model, 'model.json')) && existsSync(join(model, 'weights.bin'))).toBe(true);
    expect(existsSync(join(model, 'checkpoint'))).toBe(false);
    expect(await main(['audit', '--env', 'household-v0', '--llm', `learned:${model}`, '--n', '6', '--json'])).toBe(0);
    const audit = lastJson();
    expect(audit.n).toBe(6);
    expect(audit.llm).toBe(`learned:${model}`);
    expect(
      await main(['dream', '--env', 'household-v0', '--llm', `learned:${model}`, '--episodes', '1', '--json']),
    ).toBe(0);
    expect(lastJson().label).toMatch(/^learned household-v0/);
    // A model of one env refuses to dream another.
    expect(await main(['audit', '--env', 'webshop-lite-v0', '--llm', `learned:${model}`, '--n', '2'])).toBe(1);
    expect(err.join('\n')).toMatch(/trained on 'household-v0', not 'webshop-lite-v0'/);
  }, 120_000);

  it("seeds the replay buffer of audit, dream and train from --dataset, and refuses a missing file, one without the env's episodes, or a real run with it", async () => {
    const data = join(dir, 'offline.jsonl');
    await expertEpisodes(data, 3, 80);
    const steps = readFileSync(data, 'utf8')
      .split('\n')
      .filter(Boolean)
      .reduce((n, line) => n + JSON.parse(line).steps.length, 0);
    const run = join(dir, 'dataset-run');
    expect(
      await cli`train --preset household-easy --mode dream --llm oracle:0,0 --dataset ${data} --iterations 1
        --set tasksPerIteration=1,groupSize=2,evalInterval=0,finalEvalEpisodes=1 --out ${run} --json`,
    ).toBe(0);
    expect(lastJson().offline_dataset).toBe(data);
    expect(await main(['buffer', 'stats', '--dir', join(run, 'buffer'), '--json'])).toBe(0);
    expect(lastJson().byEnvAndSource['household-v0'].offline).toBe(steps);
    expect(
      await main(['audit', '--env', 'household-v0', '--llm', 'oracle:0,0', '--dataset', data, '--n', '3', '--json']),
    ).toBe(0);
    expect(lastJson().n).toBe(3);
    // Refused, each with what to do instead.
    expect(await cli`audit --env household-v0 --llm oracle:0,0 --dataset ${join(dir, 'missing.jsonl')} --n 3`).toBe(2);
    expect(err.join('\n')).toMatch(/--dataset .*missing\.jsonl: no such file/);
    expect(
      await main(['dream', '--env', 'webshop-lite-v0', '--llm', 'oracle:0,0', '--dataset', data, '--episodes', '1']),
    ).toBe(2);
    expect(err.join('\n')).toMatch(/holds no episodes of 'webshop-lite-v0'/);
    expect(
      await cli`train --preset household-easy --mode real --dataset ${data} --iterations 1
        --out ${join(dir, 'real-run')}`,
    ).toBe(2);
    expect(err.join('\n')).toMatch(/--dataset seeds the replay buffer of a dream/);
  }, 120_000);

  it('trains an imported domain end to end with no server: domain import, expmodel train --domain, domain train --llm learned:', async () => {
    const data = join(dir, 'chores.jsonl');
    await expertEpisodes(data, 10, 60);
    const domains = join(dir, 'domains');
    expect(await main(['domain', 'import', data, '--name', 'chores', '--dir', domains, '--json'])).toBe(0);
    const model = join(dir, 'chores-model');
    expect(
      await cli`expmodel train --domain chores --dir ${domains} --out ${model} --epochs 1 --d-model 16 --json`,
    ).toBe(0);
    expect(lastJson().env).toBe('byo:chores');
    // Every recorded transition of the domain is accounted for, and the count is the pairs trained on.
    const { data: record, pairs } = lastJson();
    expect(record.account.nextPairs + record.account.initialPairs).toBe(record.trainPairs + record.validationPairs);
    expect(pairs).toMatch(
      new RegExp(`^${record.trainPairs + record.validationPairs} pairs from \\d+ recorded transitions`),
    );
    const code = await main([
      'domain',
      'train',
      '--agent', // the dream itself, with no BC checkpoint to fall back on: this test is about dreaming in it
      'dream',
      '--name',
      'chores',
      '--dir',
      domains,
      '--llm',
      `learned:${model}`,
      '--iterations',
      '1',
      '--tasks-per-iteration',
      '2',
      '--group-size',
      '2',
      '--eval-episodes',
      '1',
      '--audit-n',
      '2',
      '--json',
    ]);
    const trained = lastJson();
    // A one-epoch toy model may fail the domain's health checks: then it says so (exit 3), never a success.
    expect(code).toBe(trained.status === 'failed' ? 3 : 0);
    expect(trained.experience_model).toMatch(/^learned domain chores/);
    expect(trained.real_steps).toBe(0);
    expect(trained.dream_steps).toBeGreaterThan(0);
  }, 120_000);

  it('audits the states a trained agent reaches (audit --agent RUN)', async () => {
    const run = join(dir, 'agent-run');
    expect(
      await cli`train --preset household-easy --mode real --iterations 1
        --set tasksPerIteration=1,groupSize=2,evalInterval=0,finalEvalEpisodes=2 --out ${run} --json`,
    ).toBe(0);
    expect(
      await main(['audit', '--env', 'household-v0', '--llm', 'oracle:0,0', '--agent', run, '--n', '4', '--json']),
    ).toBe(0);
    const audit = lastJson();
    expect(audit.n).toBe(4);
    expect(audit.reward_accuracy === null || audit.reward_accuracy === 1).toBe(true);
    expect(audit.terminated_accuracy).toBe(1);
  }, 120_000);

  it("fits the shipped model's verdict head from the shipped dataset, removes it, and fits a goal head where only the goal ends", async () => {
    const shipped = JSON.parse(readFileSync('public/models/webshop-lite-v0/model.json', 'utf8'));
    expect(shipped.verdict).toBeDefined();
    const model = join(dir, 'webshop-copy');
    cpSync('public/models/webshop-lite-v0', model, { recursive: true });
    expect(
      await main(['expmodel', 'verdict', '--model', model, '--env', 'webshop-lite-v0', '--remove', '--json']),
    ).toBe(0);
    expect(JSON.parse(readFileSync(join(model, 'model.json'), 'utf8')).verdict).toBeUndefined();
    expect(await main(['expmodel', 'verdict', '--model', model, '--env', 'webshop-lite-v0', '--json'])).toBe(0);
    expect(lastJson().head).toMatchObject({
      successes: shipped.verdict.fittedOn.successes,
      failures: shipped.verdict.fittedOn.failures,
    });
    // The recipe's head, exactly: the same split, the same real endings.
    expect(readFileSync(join(model, 'model.json'), 'utf8')).toBe(
      readFileSync('public/models/webshop-lite-v0/model.json', 'utf8'),
    );
    expect(
      readFileSync(join(model, 'weights.bin')).equals(readFileSync('public/models/webshop-lite-v0/weights.bin')),
    ).toBe(true);
    // A head an older version fitted (other features; sealed as its writer did) is refused on load, and refitted
    // by the command the error names.
    const fitted = readFileSync(join(model, 'model.json'), 'utf8');
    writeFileSync(join(model, 'model.json'), sealManifest(JSON.parse(fitted.replace('"pending"', '"choices"'))));
    expect(await main(['audit', '--env', 'webshop-lite-v0', '--llm', `learned:${model}`, '--n', '2'])).not.toBe(0);
    expect(err.join('\n')).toMatch(
      /verdict head reads features \[choices,unmatched,over_chosen\].*expmodel verdict --model DIR/,
    );
    expect(await main(['expmodel', 'verdict', '--model', model, '--env', 'webshop-lite-v0', '--json'])).toBe(0);
    expect(readFileSync(join(model, 'model.json'), 'utf8')).toBe(fitted);
    const household = join(dir, 'household-copy');
    cpSync('public/models/household-v0', household, { recursive: true });
    expect(await main(['expmodel', 'verdict', '--model', household, '--env', 'household-v0'])).toBe(0);
    expect(out.join('\n')).toMatch(
      /fitted the verdict head of .*household-copy: a goal head fitted on \d+ goal endings and \d+ goal-like steps that did not end .*per verb .*put: missing/,
    );
    expect(await main(['expmodel', 'verdict', '--model', household, '--env', 'webshop-lite-v0'])).toBe(2);
    expect(err.join('\n')).toMatch(/is of 'household-v0', not 'webshop-lite-v0'/);
  }, 120_000);

  it('exports TRL messages and explains bad options', async () => {
    const file = join(dir, 'sft.jsonl');
    expect(await main(['expmodel', 'export-sft', '--env', 'household-v0', '--out', file, '--json'])).toBe(0);
    expect(lastJson().records).toBeGreaterThan(100);
    expect(JSON.parse(readFileSync(file, 'utf8').split('\n')[0]).messages).toHaveLength(3);
    expect(await main(['expmodel', 'train', '--env', 'household-v0'])).toBe(2);
    expect(err.join('\n')).toMatch(/needs --out DIR/);
    expect(await main(['expmodel', 'train', '--env', 'atari-v5', '--out', join(dir, 'x')])).toBe(2);
    expect(err.join('\n')).toMatch(/'atari-v5' is not a registered environment/);
    expect(await main(['expmodel', 'train', '--env', 'household-v0', '--out', join(dir, 'none'), '--resume'])).toBe(2);
    expect(err.join('\n')).toMatch(/no checkpoint/);
    expect(await main(['audit', '--env', 'household-v0', '--llm', `learned:${join(dir, 'missing')}`, '--n', '2'])).toBe(
      1,
    );
    expect(err.join('\n')).toMatch(/No learned experience model in .*missing/);
  }, 120_000);
});
