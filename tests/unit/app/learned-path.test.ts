/** The page's learned:PATH grammar: models/<env> (shipped) and local/<name> (this browser), with the fix for anything else. */
import { describe, expect, it } from 'vitest';
import {
  formatLearnedPath,
  learnedPathLabel,
  learnedPathOfSpec,
  learnedSpec,
  LearnedPathError,
  modelNameProblem,
  parseLearnedPath,
} from '../../../src/app/state/setup/learned-path';

describe('learned model paths in the page', () => {
  it('parses the shipped and the local forms, and round-trips them', () => {
    expect(parseLearnedPath('models/webshop-lite-v0')).toEqual({ where: 'shipped', env: 'webshop-lite-v0' });
    expect(parseLearnedPath(' models/household-v0/ ')).toEqual({ where: 'shipped', env: 'household-v0' });
    expect(parseLearnedPath('local/my-model_2.1')).toEqual({ where: 'local', name: 'my-model_2.1' });
    for (const path of ['models/household-v0', 'local/x']) expect(formatLearnedPath(parseLearnedPath(path))).toBe(path);
    expect(learnedSpec({ where: 'local', name: 'x' })).toBe('learned:local/x');
    expect(learnedPathOfSpec('learned:models/webshop-lite-v0')).toEqual({ where: 'shipped', env: 'webshop-lite-v0' });
    expect(learnedPathOfSpec('learned:runs/m')).toBeNull();
    expect(learnedPathOfSpec('oracle:0,0')).toBeNull();
  });

  it('refuses folder paths, traversal and bad names with the forms the page knows', () => {
    expect(() => parseLearnedPath('runs/models/m')).toThrow(LearnedPathError);
    expect(() => parseLearnedPath('runs/models/m')).toThrow(
      /learned:models\/ENV .* learned:local\/NAME .* command line only/,
    );
    expect(() => parseLearnedPath('models/../secrets')).toThrow(LearnedPathError);
    expect(() => parseLearnedPath('models/a/b')).toThrow(LearnedPathError);
    expect(() => parseLearnedPath('local/has space')).toThrow(/cannot name a model/);
    expect(() => parseLearnedPath('local/')).toThrow(/needs a name/);
    expect(modelNameProblem('ok-name.1')).toBeNull();
    expect(modelNameProblem('-dash-first')).toMatch(/starting with a letter or digit/);
    expect(modelNameProblem('a..b')).toMatch(/cannot name/);
    expect(modelNameProblem('x'.repeat(65))).toMatch(/up to 64/);
  });

  it('labels a learned model as one, never as a chat model or the oracle', () => {
    const shipped = learnedPathLabel({ where: 'shipped', env: 'webshop-lite-v0' });
    const local = learnedPathLabel({ where: 'local', name: 'mine' });
    for (const label of [shipped, local]) {
      expect(label).toMatch(/^learned experience model \(tfjs, not a chat model\)/);
      expect(label).not.toMatch(/oracle/);
    }
    expect(shipped).toMatch(/shipped for webshop-lite-v0/);
    expect(local).toMatch(/'mine', trained in this browser/);
  });
});
