/**
 * buildDomain: an imported application becomes a domain (card from the data, deterministic split
 * by task), and every kind of unusable data is refused with a message naming the problem and the fix.
 */
import { describe, expect, it } from 'vitest';
import { readTrajectories } from '../../../src/core/data/formats';
import {
  buildDomain,
  DomainError,
  domainSummary,
  heldOutTasks,
  MIN_DOMAIN_EPISODES,
  parseTaskDescriptions,
  trainingTasks,
  validateDomainData,
} from '../../../src/core/domain/domain';
import { foreignAgentGym, foreignOurs, foreignTrajectories } from './fixtures';

function errorOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

describe('buildDomain', () => {
  it('builds a foreign AgentGym app into a domain: env byo:NAME, a derived card, tasks, stats', async () => {
    const imported = await foreignTrajectories();
    expect(new Set(imported.map((t) => t.env))).toEqual(new Set(['myapp'])); // unknown prefix: the env name as is
    const domain = buildDomain('myapp', imported, {
      tasks: ['put a towel in cart.', 'clean a mug and put it in cabinet.'],
      seed: 3,
    });
    expect(domain.envId).toBe('byo:myapp');
    expect(domain.card).toMatchObject({
      env: 'byo:myapp',
      name: 'myapp',
      abstraction: 'generic',
      showAdmissible: true,
    });
    expect(domain.card.text).toMatch(/learned from 24 episodes/); // the card sees the training episodes only
    expect(new RegExp(domain.card.globalActions!).test('go to desk 1')).toBe(true);
    for (const t of [...domain.train, ...domain.heldOut]) {
      expect(t.env).toBe('byo:myapp');
      expect(t.task.env).toBe('byo:myapp');
      expect(t.task.origin).toBe('imported');
      expect(t.id.startsWith('byo:myapp/myapp_')).toBe(true);
    }
    expect(domain.train.length + domain.heldOut.length).toBe(30);
    expect(domain.heldOut.length).toBe(6);
    expect(domain.stats).toMatchObject({
      episodes: 30,
      trainEpisodes: 24,
      heldOutEpisodes: 6,
      splitBy: 'instruction',
      extraTasks: 2,
    });
    expect(domain.stats.stepsWithAdmissible).toBe(domain.stats.steps);
    expect(domain.tasks.every((t) => t.origin === 'imported' && t.env === 'byo:myapp')).toBe(true);
    expect(domain.tasks.map((t) => t.instruction)).toContain('clean a mug and put it in cabinet.');
    expect(new Set(domain.tasks.map((t) => t.id)).size).toBe(domain.tasks.length);
    // AgentGym has no rewards: said as a warning, not an error
    expect(domain.warnings.join('\n')).toMatch(/30 episodes of 30 record no outcome/);
    expect(domainSummary(domain)).toMatch(/domain 'myapp' \(byo:myapp\)/);
  });

  it('splits by task, deterministically in the seed; held-out tasks are never training tasks', async () => {
    const imported = await foreignTrajectories();
    const a = buildDomain('myapp', imported, { seed: 5 });
    const b = buildDomain('myapp', imported, { seed: 5 });
    const c = buildDomain('myapp', imported, { seed: 6 });
    expect(b.heldOut.map((t) => t.id)).toEqual(a.heldOut.map((t) => t.id));
    expect(b.card).toEqual(a.card);
    expect(b.tasks).toEqual(a.tasks);
    expect(c.heldOut.map((t) => t.id)).not.toEqual(a.heldOut.map((t) => t.id));
    const train = new Set(trainingTasks(a).map((t) => t.id));
    const held = heldOutTasks(a);
    expect(held.length).toBeGreaterThan(0);
    for (const t of held) expect(train.has(t.id)).toBe(false);
    expect(new Set(a.heldOut.map((t) => t.task.id))).toEqual(new Set(a.heldOutTaskIds));
    // a larger share holds out more
    expect(buildDomain('myapp', imported, { seed: 5, heldOutShare: 0.5 }).heldOut.length).toBe(15);
  });

  it('falls back to an episode split when every episode has the same instruction', async () => {
    const same = (await foreignOurs(12)).map((t) => ({ ...t, task: { ...t.task, instruction: 'do the one thing.' } }));
    const domain = buildDomain('oneTask', same, { seed: 1 });
    expect(domain.stats.splitBy).toBe('episode');
    expect(domain.heldOut.length).toBe(2);
    expect(domain.train.length).toBe(10);
    expect(trainingTasks(domain).length).toBe(1);
    expect(heldOutTasks(domain).length).toBe(1);
    expect(domain.warnings.join('\n')).toMatch(/held-out episodes share tasks/);
  });

  it('reads task descriptions: one a line, comments and blanks skipped', () => {
    expect(parseTaskDescriptions('# my tasks\nput a towel in cart.\n\n  heat a mug   and put it on shelf. \n')).toEqual(
      ['put a towel in cart.', 'heat a mug and put it on shelf.'],
    );
  });
});

describe('domain validation: each problem is named with its fix', () => {
  it('too few episodes: says the minimum and how many were found', async () => {
    const none = errorOf(() => buildDomain('myapp', []));
    expect(none.has('too-few-episodes')).toBe(true);
    expect(none.message).toMatch(/found 0/);
    const few = (await foreignTrajectories()).slice(0, 5);
    const error = errorOf(() => buildDomain('myapp', few));
    expect(error.problems.map((p) => p.code)).toEqual(['too-few-episodes']);
    expect(error.message).toMatch(/Cannot build the domain 'myapp'/);
    expect(error.message).toMatch(
      new RegExp(`Too few episodes: found 5, a domain needs at least ${MIN_DOMAIN_EPISODES}`),
    );
    expect(error.message).toMatch(/Add more demonstrated episodes/);
  });

  it('mixed environments in one file (AgentGym item-id prefixes)', async () => {
    const text = (await foreignAgentGym(12)).replace(
      /"item_id": "myapp_((?:expert|random)_\d*[02468]_)/g,
      '"item_id": "otherapp_$1',
    );
    const mixed = readTrajectories(text, 'agentgym');
    const error = errorOf(() => buildDomain('myapp', mixed));
    expect(error.problems.map((p) => p.code)).toEqual(['mixed-envs']);
    expect(error.message).toMatch(/mixes 2 environments: /);
    expect(error.message).toContain("'myapp' (6 episodes)");
    expect(error.message).toContain("'otherapp' (6 episodes)");
    expect(error.message).toMatch(/Split the file by environment/);
  });

  it('episodes with no actions', async () => {
    const base = await foreignOurs(12);
    const broken = base.map((t, i) =>
      i === 3
        ? { ...t, steps: [] }
        : i === 7
          ? { ...t, steps: t.steps.map((s, j) => (j === 0 ? { ...s, action: ' ' } : s)) }
          : t,
    );
    const error = errorOf(() => buildDomain('myapp', broken));
    expect(error.problems.map((p) => p.code)).toEqual(['no-actions']);
    expect(error.message).toMatch(new RegExp(`2 episodes have no actions .*'${base[3].id}', '${base[7].id}'`));
    expect(error.message).toMatch(/Every step needs the action the agent took/);
  });

  it('missing instructions', async () => {
    const broken = (await foreignOurs(12)).map((t, i) =>
      i < 2 ? { ...t, task: { ...t.task, instruction: '  ' } } : t,
    );
    const error = errorOf(() => buildDomain('myapp', broken));
    expect(error.problems.map((p) => p.code)).toEqual(['missing-instructions']);
    expect(error.message).toMatch(/2 episodes have no task instruction/);
    expect(error.message).toMatch(/fill in task.instruction/);
  });

  it('observations all empty', async () => {
    const blank = (await foreignOurs(12)).map((t) => ({
      ...t,
      final_observation: '',
      steps: t.steps.map((s) => ({ ...s, observation: '' })),
    }));
    const error = errorOf(() => buildDomain('myapp', blank));
    expect(error.problems.map((p) => p.code)).toEqual(['empty-observations']);
    expect(error.message).toMatch(/Every observation is empty/);
    expect(error.message).toMatch(/Export the text the application showed the agent/);
  });

  it('an action vocabulary too small (one action) or too large (nothing repeats)', async () => {
    const base = await foreignOurs(12);
    const small = errorOf(() =>
      buildDomain(
        'myapp',
        base.map((t) => ({ ...t, steps: t.steps.map((s) => ({ ...s, action: 'look' })) })),
      ),
    );
    expect(small.problems.map((p) => p.code)).toEqual(['vocabulary-too-small']);
    expect(small.message).toMatch(/too small to learn from: every step takes the same action \('look'\)/);
    expect(small.message).toMatch(/at least 2 distinct actions/);
    const free = base.map((t, i) => ({
      ...t,
      steps: t.steps.map((s, j) => ({ ...s, action: `Sure! Reply ${i}.${j}` })),
    }));
    const large = errorOf(() => buildDomain('myapp', free));
    expect(large.problems.map((p) => p.code)).toEqual(['vocabulary-too-large']);
    expect(large.message).toMatch(/too large to learn from: \d+ distinct actions in \d+ steps \(100%, at most 90%\)/);
    expect(large.message).toMatch(/Write actions as the application's commands/);
  });

  it('a bad name or share, and several problems at once', async () => {
    const few = (await foreignOurs(12)).slice(0, 4).map((t) => ({ ...t, task: { ...t.task, instruction: '' } }));
    const error = errorOf(() => buildDomain('my app!', few, { heldOutShare: 1.5 }));
    expect(error.problems.map((p) => p.code)).toEqual([
      'bad-name',
      'bad-option',
      'too-few-episodes',
      'missing-instructions',
    ]);
    expect(error.message).toMatch(/4 problems found/);
    expect(error.message).toMatch(/--name myapp/);
    expect(validateDomainData('myapp', await foreignOurs(12))).toEqual([]);
  });
});
