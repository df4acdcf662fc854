/**
 * `dreamgym domain import` and `domain train`: the import writes the domain folder (card, split,
 * buffer) and refuses unusable data with the clear message; training runs against a stand-in
 * OpenAI-compatible server (a test double on a local port) and prints (a)(b)(c); the oracle is
 * refused for imported domains.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main';
import { candidateIndex, inferCandidates } from '../../../src/core/data/candidates';
import { parseTrajectoriesJsonl } from '../../../src/core/data/trajectory';
import { loadDomainFolder } from '../../../src/node/domain-folder';
import { writeTrajectories } from '../../../src/core/data/formats';
import { foreignAgentGym, foreignOurs, scriptedDomainChat } from './fixtures';
import { OpenAiTestServer } from '../llm/openai-test-server';
import { captureCliOutput } from '../support/cli-output';
import { act, argv, cli } from '../cli/run-cli';

const { out, err, lastJson } = captureCliOutput();
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dreamgym-domain-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A rate over `count` episodes or steps (printed to 4 decimals): a whole number of them, out of `count`. */
function expectShareOf(count: number, rate: number): void {
  const hits = Math.round(rate * count);
  expect(rate).toBeCloseTo(hits / count, 4);
  expect(hits).toBeGreaterThanOrEqual(0);
  expect(hits).toBeLessThanOrEqual(count);
}

/**
 * The stand-in server answers chat completions with the scripted household dream (or, with
 * `endAtOnce`, as a model that ends every episode with success at once).
 */
let server: OpenAiTestServer;
let endAtOnce = false;
const endedAnswer = JSON.stringify({
  reasoning: 'done',
  valid: true,
  next_state: { observation: 'Task complete.', admissible: [] },
  reward: 1,
  terminated: true,
});
beforeAll(async () => {
  const scripted = scriptedDomainChat();
  server = await OpenAiTestServer.answering(
    async ({ body: { messages } }) =>
      endAtOnce && !messages[0].content.includes('write the first state')
        ? endedAnswer
        : (await scripted.complete({ messages, maxTokens: 400 })).text,
    { promptTokens: 300, completionTokens: 60 },
  );
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0; // each test's own, well within the server's bound on recorded requests
});

async function writeRecords(n: number): Promise<string> {
  const file = join(dir, `myapp-${n}.json`);
  writeFileSync(file, await foreignAgentGym(n));
  return file;
}

describe('dreamgym domain import', () => {
  it('validates, derives the card, and writes the domain folder (card, split, buffer)', async () => {
    const file = await writeRecords(30);
    const tasks = join(dir, 'tasks.txt');
    writeFileSync(tasks, '# extra tasks\nput a towel in cart.\nwater the plants.\n');
    const code = await cli`domain import ${file} --name myapp --format agentgym --tasks ${tasks} --dir ${dir} --json`;
    expect(err.join('\n')).toBe('');
    expect(code).toBe(0);
    const summary = lastJson();
    expect(summary).toMatchObject({
      name: 'myapp',
      env: 'byo:myapp',
      episodes: 30,
      train_episodes: 24,
      held_out_episodes: 6,
      extra_tasks: 2,
      split_by: 'instruction',
    });
    expect(summary.buffer.episodes).toBe(24);
    // AgentGym records no outcome: the endings say so, in the words the page's card uses (outcomes.ts).
    expect(summary.outcomes).toMatchObject({ episodes: 30, successes: 0, failures: 0, unrecorded: 30 });
    expect(summary.card).toMatch(/Imported domain 'byo:myapp' \(myapp\), learned from 24 episodes/);
    const path = join(dir, 'myapp', 'current'); // the link to its data folder
    for (const f of [
      'domain.json',
      'card.json',
      'train.jsonl',
      'held-out.jsonl',
      'buffer/meta.json',
      'buffer/transitions.jsonl',
    ])
      expect(existsSync(join(path, f))).toBe(true);
    expect(JSON.parse(readFileSync(join(path, 'card.json'), 'utf8')).text).toBe(summary.card);
    expect(
      parseTrajectoriesJsonl(readFileSync(join(path, 'held-out.jsonl'), 'utf8'), { knownEnvs: ['byo:myapp'] }),
    ).toHaveLength(6);
    const domain = loadDomainFolder(dir, 'myapp');
    expect(domain.train).toHaveLength(24);
    expect(domain.tasks).toHaveLength(summary.tasks);

    // importing again under the same name needs --replace
    expect(await main(['domain', 'import', file, '--name', 'myapp', '--format', 'agentgym', '--dir', dir])).toBe(1);
    expect(err.join('\n')).toMatch(/already exists .* --replace/);
    expect(await cli`domain import ${file} --name myapp --format agentgym --dir ${dir} --replace --seed 1`).toBe(0);
    expect(out.join('\n')).toMatch(/domain 'myapp' \(byo:myapp\)/);
    expect(out.join('\n')).toContain(
      '  endings    0 succeed, 0 fail, 0 hit the step limit, 30 unrecorded, of 30 episodes',
    );
    // What to run next: the domain's learned experience model, then the dream with it (no server needed).
    expect(out.join('\n')).toContain(
      `next: npm run dreamgym -- expmodel train --domain myapp --dir ${dir} --out runs/models/myapp`,
    );
    expect(out.join('\n')).toContain(
      `then: npm run dreamgym -- domain train --name myapp --dir ${dir} --llm learned:runs/models/myapp`,
    );
    expect(out.join('\n')).not.toMatch(/openai:/);
    expect(summary.next[0]).toMatch(/^npm run dreamgym -- expmodel train --domain myapp/);
  });

  it('rejects a too-small file with the clear message, and writes nothing', async () => {
    const file = await writeRecords(5);
    expect(await main(['domain', 'import', file, '--name', 'tiny', '--format', 'agentgym', '--dir', dir])).toBe(1);
    const message = err.join('\n');
    expect(message).toMatch(/dreamgym domain import: Cannot build the domain 'tiny'/);
    expect(message).toMatch(/Too few episodes: found 5, a domain needs at least 10/);
    expect(existsSync(join(dir, 'tiny'))).toBe(false);
  });

  it('needs --name', async () => {
    const file = await writeRecords(5);
    expect(await main(['domain', 'import', file, '--format', 'agentgym', '--dir', dir])).toBe(2);
    expect(err.join('\n')).toMatch(/needs --name/);
  });
});

describe('dreamgym domain train', () => {
  it('trains in the dream and prints dream success, action agreement and the audit', async () => {
    const file = await writeRecords(30);
    expect(
      await main(['domain', 'import', file, '--name', 'myapp', '--format', 'agentgym', '--dir', dir, '--json']),
    ).toBe(0);
    const train = argv`domain train --name myapp --dir ${dir} --llm openai:${server.url}#fake --iterations 1`;
    const code = await cli`${train} --tasks-per-iteration 2 --group-size 2 --step-limit 5 --eval-episodes 3
      --audit-n 8 --json`;
    expect(err.join('\n')).toBe('');
    // A healthy model (warnings at most: AgentGym records no outcome, so no ending is audited).
    expect(lastJson().status).toBe('ok');
    expect(code).toBe(0);
    const summary = lastJson();
    expect(summary).toMatchObject({
      name: 'myapp',
      env: 'byo:myapp',
      mode: 'dream',
      oracle: false,
      iterations: 1,
      real_steps: 0,
      step_limit: 5,
    });
    expect(summary.dream_steps).toBeGreaterThan(0);
    const { dream_success: a, action_agreement: b, audit: c } = summary.eval;
    expect(a.episodes).toBe(3);
    expectShareOf(a.episodes, a.success_rate);
    expect(b.usable_steps).toBeGreaterThan(0);
    expectShareOf(b.usable_steps, b.agreement); // steps where the policy chose the demonstrated action
    expect(c).toMatchObject({ env: 'byo:myapp', n: 8, invalid_rate: 0, tokens_per_transition: 360 });
    expect(c.observation_f1).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'myapp', 'runs', 'seed-0', 'summary.json'))).toBe(true);
    expect(
      readFileSync(join(dir, 'myapp', 'runs', 'seed-0', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(1);

    // without --json: a readable report
    expect(
      await cli`${train} --tasks-per-iteration 1 --group-size 2 --step-limit 4 --eval-episodes 2 --audit-n 4`,
    ).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(/\(a\) dream success on 2 held-out tasks/);
    expect(text).toMatch(/\(b\) action agreement/);
    expect(text).toMatch(/\(c\) audit on 4 held-out transitions/);
  });

  it('a model that ends every episode at once is reported as failed: status, stderr and exit code 3', async () => {
    // ETO records outcomes, so the audit can check the endings.
    const file = join(dir, 'myapp.eto.json');
    writeFileSync(file, writeTrajectories(await foreignOurs(30), 'eto'));
    // No --format: the records say ETO.
    expect(await main(['domain', 'import', file, '--name', 'myapp', '--dir', dir, '--json'])).toBe(0);
    expect(lastJson().format).toBe('eto');
    const stderr: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
    endAtOnce = true;
    try {
      const args = ['domain', 'train', '--name', 'myapp', '--dir', dir, '--llm', `openai:${server.url}#fake`];
      const small = ['--iterations', '1', '--tasks-per-iteration', '2', '--group-size', '2', '--audit-n', '12'];
      // The episodes came from household (renamed): its real held-out tasks can be played too.
      const real = ['--real-env', 'household-v0', '--real-episodes', '3'];
      expect(await main([...args, ...small, ...real, '--json'])).toBe(3);
      const summary = lastJson();
      expect(summary.status).toBe('failed');
      expect(summary.eval.real).toMatchObject({ env: 'household-v0', split: 'dev', episodes: 3 });
      expectShareOf(3, summary.eval.real.success_rate);
      // Every dreamed episode ends at its first step; the halt refuses those endings a success.
      expect(summary.eval.dream_success).toMatchObject({ success_rate: 0, mean_length: 1, first_step_share: 1 });
      expect(summary.problems.map((p: { kind: string }) => p.kind)).toEqual(
        expect.arrayContaining(['first-step', 'terminated-accuracy']),
      );
      const text = stderr.join('');
      expect(text).toMatch(/error: FAILED: the experience model .* cannot be trusted on this domain/);
      expect(text).toMatch(/ended at their first step/);
      expect(text).toMatch(/terminated accuracy is 0\.\d+ .*Fix: train the experience model on more episodes/s);
      // Behaviour cloning first (the default); a model that fails its audit is never dreamed in: BC is returned.
      expect(summary.agent).toMatchObject({ trained: 'bc-then-dream', returned: 'bc', dream_iterations: 0 });
      expect(summary.agent.reason).toMatch(/failed before any dream/);
      expect(summary.bc.training_agreement).toBeGreaterThan(summary.bc.training_agreement_before);
      expect(existsSync(join(summary.agent.checkpoint, 'manifest.json'))).toBe(true);
      // Without --json the report says FAILED too, what was trained and which checkpoint is returned.
      expect(await main([...args, ...small])).toBe(3);
      expect(out.join('\n')).toMatch(/FAILED \(see the errors above\): myapp/);
      expect(out.join('\n')).toMatch(/returned: the behaviour-cloning policy, because the experience model failed/);
      await actWithoutAdmissible(summary.out as string);
      expect(await main([...args, ...small, '--real-env', 'nowhere-v0'])).toBe(2);
      expect(err.join('\n')).toMatch(/--real-env 'nowhere-v0' is not a registered env/);
    } finally {
      endAtOnce = false;
    }
  });

  /** `dreamgym act --run` on the domain run: a line without `admissible` gets the import's inferred candidates. */
  async function actWithoutAdmissible(run: string): Promise<void> {
    const domain = loadDomainFolder(dir, 'myapp');
    const t = domain.heldOut[0];
    const state = { instruction: t.task.instruction, observation: t.steps[1].observation };
    const previousAction = t.steps[0].action;
    const input = [
      JSON.stringify({ ...state, previous_actions: [previousAction] }),
      JSON.stringify({ ...state, admissible: ['look', 'inventory'], previous_actions: [previousAction] }),
    ].join('\n');
    const { code, lines } = await act(['--run', run], input);
    expect(code).toBe(0);
    const [inferred, given] = lines;
    // The same inference as the import's, against the domain's training episodes.
    const expected = inferCandidates(candidateIndex(domain.train), { ...state, previousAction }, undefined);
    expect(inferred).toMatchObject({ line: 1, candidates: 'inferred', inferred_candidates: expected });
    expect(expected.length).toBeGreaterThanOrEqual(2);
    expect(expected).toContain(inferred.action);
    expect(given).toMatchObject({ line: 2, candidates: 'given' });
    expect(['look', 'inventory']).toContain(given.action);
  }

  it('refuses the oracle for an imported domain, and names a missing domain', async () => {
    expect(await main(['domain', 'train', '--name', 'myapp', '--dir', dir, '--llm', 'oracle:0,0'])).toBe(2);
    expect(err.join('\n')).toMatch(/oracle is not available for the imported domain 'myapp'/);
    expect(
      await main(['domain', 'train', '--name', 'nothere', '--dir', dir, '--llm', `openai:${server.url}#fake`]),
    ).toBe(1);
    expect(err.join('\n')).toMatch(
      /No domain named 'nothere'.*Import it first: dreamgym domain import FILE --name nothere --dir/,
    );
  });
});
