import { describe, expect, it } from 'vitest';
import {
  readTrajectories,
  readTrajectoriesAs,
  writeTrajectories,
  FORMATS,
  assertFormat,
  assertReadFormat,
} from '../../../src/core/data/formats';
import { parseTrajectoriesJsonl, trajectoriesToJsonl } from '../../../src/core/data/trajectory';
import { DatasetImportError } from '../../../src/core/data/errors';
import { episodeDigest, parseActionText } from '../../../src/core/data/conversation';
import type { Trajectory } from '../../../src/core/types';
import { householdEpisode, webshopEpisode } from './fixtures';

const knownEnvs = ['webshop-lite-v0', 'household-v0'];
const episodes = [householdEpisode(), webshopEpisode()];

function importError(fn: () => unknown): DatasetImportError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DatasetImportError) return error;
    throw error;
  }
  throw new Error('expected a DatasetImportError');
}

describe('our trajectory JSONL', () => {
  it('round-trips byte for byte', () => {
    const text = trajectoriesToJsonl(episodes);
    expect(text.split('\n').filter(Boolean)).toHaveLength(2);
    const back = parseTrajectoriesJsonl(text, { knownEnvs });
    expect(back).toEqual(episodes.map((e) => JSON.parse(JSON.stringify(e))));
    expect(trajectoriesToJsonl(back)).toBe(text);
  });

  it('writes keys in a fixed order whatever order the object was built in', () => {
    const a = householdEpisode();
    const shuffled = Object.fromEntries(Object.entries(a).reverse()) as typeof a;
    expect(trajectoriesToJsonl([shuffled])).toBe(trajectoriesToJsonl([a]));
  });

  it('rejects bad JSON with its line number and imports nothing', () => {
    const lines = trajectoriesToJsonl(episodes).split('\n');
    lines.splice(1, 0, '{"id": "broken",');
    const error = importError(() => parseTrajectoriesJsonl(lines.join('\n'), { knownEnvs, sourceName: 'bad.jsonl' }));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0].line).toBe(2);
    expect(error.message).toMatch(/bad\.jsonl/);
    expect(error.message).toMatch(/line 2: not valid JSON/);
    expect(error.message).toMatch(/nothing was imported/);
  });

  it('names the line and the field of a missing field, a wrong type and an unknown env — all at once', () => {
    const [first, second] = episodes.map((e) => JSON.parse(JSON.stringify(e)));
    delete first.task.instruction;
    second.steps[1].reward = 'one';
    const third = JSON.parse(JSON.stringify(householdEpisode(4)));
    third.env = 'mars-rover-v9';
    third.task.env = 'mars-rover-v9';
    const text = [first, second, third].map((x) => JSON.stringify(x)).join('\n');
    const error = importError(() => parseTrajectoriesJsonl(text, { knownEnvs }));
    const where = error.problems.map((p) => `${p.line}:${p.field}`);
    expect(where).toContain('1:task.instruction');
    expect(where).toContain('2:steps[1].reward');
    expect(where).toContain('3:env');
    expect(error.message).toMatch(/line 1, field 'task.instruction': missing field/);
    expect(error.message).toMatch(/line 2, field 'steps\[1\].reward': expected a finite number, got the string "one"/);
    expect(error.message).toMatch(
      /line 3, field 'env': unknown environment 'mars-rover-v9'; known: webshop-lite-v0, household-v0/,
    );
  });

  it('catches inconsistent records: both terminated and truncated, step count mismatch', () => {
    const bad = JSON.parse(JSON.stringify(householdEpisode()));
    bad.steps[0].truncated = true;
    bad.steps[0].terminated = true;
    bad.result.steps = 9;
    const error = importError(() => parseTrajectoriesJsonl(JSON.stringify(bad), { knownEnvs }));
    expect(error.problems.map((p) => p.field)).toEqual(['steps[0].truncated', 'result.steps']);
  });

  it('rejects an empty file', () => {
    expect(() => parseTrajectoriesJsonl('\n\n', { knownEnvs })).toThrow(/holds no records/);
  });
});

describe('AgentGym, ETO and TRL', () => {
  it.each(['agentgym', 'eto', 'trl'] as const)(
    '%s keeps actions, thoughts and observations through a round trip',
    (format) => {
      const text = writeTrajectories(episodes, format);
      const back = readTrajectories(text, format, { knownEnvs });
      expect(back).toHaveLength(2);
      back.forEach((t, i) => {
        const original = episodes[i];
        expect(t.env).toBe(original.env);
        expect(t.seed).toBe(original.seed);
        expect(t.source).toBe('imported');
        expect(t.task.instruction).toBe(original.task.instruction);
        expect(t.steps.map((s) => s.action)).toEqual(original.steps.map((s) => s.action));
        expect(t.steps.map((s) => s.observation)).toEqual(original.steps.map((s) => s.observation));
        expect(t.steps.map((s) => s.thought)).toEqual(original.steps.map((s) => s.thought));
      });
      // Our reading of the result: ETO carries the outcome, AgentGym and TRL do not.
      if (format === 'eto') expect(back.map((t) => t.result.success)).toEqual([true, true]);
      else expect(back.map((t) => t.result.terminate_reason)).toEqual(['unfinished', 'unfinished']);
      // Converting back to ours and re-exporting gives the same bytes in that format.
      expect(writeTrajectories(back, 'ours')).toBe(
        writeTrajectories(readTrajectories(writeTrajectories(back, 'ours'), 'ours', { knownEnvs }), 'ours'),
      );
    },
  );

  it('AgentGym output follows the AgentTraj shape', () => {
    const [record] = JSON.parse(writeTrajectories([householdEpisode()], 'agentgym'));
    expect(record.item_id).toBe(`alfworld_expert_3_${episodeDigest(householdEpisode())}`);
    expect(record.conversations[0]).toMatchObject({ from: 'human', loss: null });
    expect(record.conversations[1]).toEqual({ from: 'gpt', loss: false, value: 'Ok.' });
    expect(record.conversations[2].value).toMatch(
      /\nAVAILABLE ACTIONS: go to countertop 1,go to fridge 1,inventory,look$/,
    );
    expect(record.conversations[3]).toEqual({
      from: 'gpt',
      loss: true,
      value: 'Thought:\nThe apple is probably on the countertop.\n\nAction:\ngo to countertop 1',
    });
  });

  it('keeps the admissible lists through AgentGym (household) and TRL (both envs)', () => {
    const viaAgentGym = readTrajectories(writeTrajectories([householdEpisode()], 'agentgym'), 'agentgym');
    expect(viaAgentGym[0].steps[0].admissible).toEqual(householdEpisode().steps[0].admissible);
    const viaTrl = readTrajectories(writeTrajectories(episodes, 'trl'), 'trl');
    expect(viaTrl.map((t) => t.steps.map((s) => s.admissible))).toEqual(
      episodes.map((t) => t.steps.map((s) => s.admissible)),
    );
  });

  it('reads TRL prompt–completion records', () => {
    const record = {
      env: 'household-v0',
      prompt: [
        { role: 'system', content: 'Your task: put a apple in fridge.' },
        { role: 'user', content: 'You arrive at countertop 1.' },
      ],
      completion: [{ role: 'assistant', content: 'Thought: take it\nAction: take apple 1 from countertop 1' }],
    };
    const [t] = readTrajectories(JSON.stringify(record), 'trl', { knownEnvs });
    expect(t.steps).toHaveLength(1);
    expect(t.steps[0].action).toBe('take apple 1 from countertop 1');
    expect(t.steps[0].thought).toBe('take it');
  });

  it('rejects malformed chat records whole, naming the record and field', () => {
    const good = JSON.parse(writeTrajectories(episodes, 'agentgym'));
    good[1].conversations[3].value = 'I will think about it';
    good[0].conversations[2].from = 'robot';
    const error = importError(() => readTrajectories(JSON.stringify(good), 'agentgym', { knownEnvs }));
    expect(error.unit).toBe('record');
    expect(error.problems.map((p) => `${p.line}:${p.field}`)).toEqual([
      '1:conversations[2].from',
      '2:conversations[3]',
    ]);
    expect(error.message).toMatch(/record 2, field 'conversations\[3\]': no action found/);
  });

  it('rejects records for unknown environments', () => {
    const records = JSON.parse(writeTrajectories([householdEpisode()], 'eto'));
    records[0].id = 'sciworld_3';
    expect(() => readTrajectories(JSON.stringify(records), 'eto', { knownEnvs })).toThrow(
      /record 1, field 'id': unknown environment 'sciworld'/,
    );
  });

  it('names the broken line of a JSON array file', () => {
    const text = '[\n {"item_id": "alfworld_1",\n  "conversations": [}\n]';
    expect(() => readTrajectories(text, 'agentgym')).toThrow(/line 3: not valid JSON/);
  });

  it('parses the last Action: line, with or without a thought', () => {
    expect(parseActionText('Thought:\nlook around\n\nAction:\nlook')).toEqual({
      thought: 'look around',
      action: 'look',
    });
    expect(parseActionText('Thought: a\nAction: b\nAction: click[buy now]')).toEqual({
      thought: 'a\nAction: b',
      action: 'click[buy now]',
    });
    expect(parseActionText('go to fridge 1')).toBeUndefined();
    expect(parseActionText('go to fridge 1', { allowBare: true })).toEqual({ action: 'go to fridge 1' });
    expect(parseActionText('')).toBeUndefined();
  });

  it('knows its format names', () => {
    expect(FORMATS).toEqual(['ours', 'agentgym', 'eto', 'trl']);
    expect(() => assertFormat('csv')).toThrow(
      "Unknown trajectory format 'csv'. Valid formats: ours, agentgym, eto, trl.",
    );
  });
});

describe('the format of a file', () => {
  it.each(FORMATS)('detects %s from its records, and reads what the format given reads', (format) => {
    const text = writeTrajectories(episodes, format);
    const detected = readTrajectoriesAs(text, 'auto', { knownEnvs });
    expect(detected.format).toBe(format);
    expect(detected.trajectories).toEqual(readTrajectories(text, format, { knownEnvs }));
  });

  it('names the format a file looks like when it is read as another, and records of no format', () => {
    const eto = writeTrajectories(episodes, 'eto');
    const error = (() => {
      try {
        readTrajectories(eto, 'ours', { knownEnvs, sourceName: 'play.json' });
      } catch (e) {
        return e as DatasetImportError;
      }
    })();
    expect(error).toBeInstanceOf(DatasetImportError);
    expect(error!.message).toMatch(
      /looks like eto \(records with 'id' and 'conversations', and no 'item_id'\), not ours: import it as eto\./,
    );
    expect(error!.message).toMatch(/nothing was imported/);
    expect(() => readTrajectoriesAs('{"name":"x","rows":[]}\n', 'auto', { knownEnvs })).toThrow(
      /line 1: no format of ours has records like this one \(ours: records with 'format', 'task' and 'steps'; agentgym/,
    );
    expect(assertReadFormat('auto')).toBe('auto');
    expect(() => assertReadFormat('csv')).toThrow(/Unknown trajectory format 'csv'/);
  });
});

describe('firstJsonErrorOffset', async () => {
  const { firstJsonErrorOffset } = await import('../../../src/core/data/json-position');
  it('accepts valid JSON and finds the first bad token of broken JSON', () => {
    for (const ok of ['{}', '[1, -2.5e3, "a\\"b", true, false, null, {"x": [ ]}]', ' "\\u00e9" '])
      expect(firstJsonErrorOffset(ok)).toBe(-1);
    expect(firstJsonErrorOffset('[1, 2,, 3]')).toBe(6);
    expect(firstJsonErrorOffset('{"a": tru}')).toBe(6); // the token 'tru'
    expect(firstJsonErrorOffset('{"a" 1}')).toBe(5);
    expect(firstJsonErrorOffset('[1] x')).toBe(4);
    expect(firstJsonErrorOffset('["abc')).toBe(1); // the string that never ends
    // What JSON.parse refuses and a lenient reader might take: comments, trailing commas, nothing at all.
    expect(firstJsonErrorOffset('{"a": 1} // note')).toBe(9);
    expect(firstJsonErrorOffset('{"a": 1,}')).toBe(8);
    expect(firstJsonErrorOffset('[01]')).toBe(2);
    expect(firstJsonErrorOffset('  ')).toBe(2);
    expect(firstJsonErrorOffset('{"a": "b\tc"}')).toBe(6); // a raw tab inside a string
  });
});

describe('hostile and awkward files (issue 13)', () => {
  it('reads a file that starts with a UTF-8 byte-order mark, in every format', () => {
    for (const format of FORMATS) {
      const text = '\uFEFF' + writeTrajectories(episodes, format);
      expect(readTrajectories(text, format, { knownEnvs }).map((t) => t.steps.length)).toEqual(
        episodes.map((t) => t.steps.length),
      );
    }
  });

  it('refuses a record nested deeper than MAX_JSON_DEPTH with its line, before anything copies it', async () => {
    const { MAX_JSON_DEPTH } = await import('../../../src/core/data/json-position');
    const deep = JSON.parse(trajectoriesToJsonl([webshopEpisode()]));
    deep.task.spec = '<deep>'; // spliced in as text: even JSON.stringify of it would overflow the stack
    const text =
      trajectoriesToJsonl([householdEpisode()]) +
      JSON.stringify(deep).replace('"<deep>"', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000)) +
      '\n';
    const error = importError(() => readTrajectories(text, 'ours', { knownEnvs }));
    expect(error.problems.map((p) => p.line)).toEqual([2]);
    expect(error.message).toMatch(
      new RegExp(`line 2: nested deeper than ${MAX_JSON_DEPTH} levels \\(from column \\d+\\)`),
    );
  });

  it('names the line of a deeply nested broken JSON array instead of overflowing the stack', () => {
    const text = '[\n' + '['.repeat(100_000) + '\n]';
    const error = importError(() => readTrajectories(text, 'agentgym'));
    expect(error.problems).toEqual([
      expect.objectContaining({ line: 2, message: expect.stringMatching(/nested deeper than/) }),
    ]);
  });

  it('reads TRL string prompt/completion records as one-step episodes (the standard form)', () => {
    const text = [
      {
        env: 'household-v0',
        prompt: 'Your task is to: put a apple in fridge.\nYou arrive at countertop 1.',
        completion: 'take apple 1 from countertop 1',
      },
      { env: 'household-v0', prompt: 'Your task is to: look.', completion: 'Thought: nothing to do\nAction: look' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');
    const [a, b] = readTrajectories(text, 'trl', { knownEnvs });
    expect(a.task.instruction).toBe('put a apple in fridge.');
    expect(a.steps.map((s) => s.action)).toEqual(['take apple 1 from countertop 1']);
    expect(b.steps[0]).toMatchObject({ action: 'look', thought: 'nothing to do' });
  });

  it('checks the environment of every record, even when other records or fields are broken', () => {
    const records = JSON.parse(writeTrajectories([householdEpisode(), householdEpisode()], 'agentgym'));
    records[0].item_id = 'sciworld_3';
    records[1].conversations[3].value = 'no action here';
    const error = importError(() => readTrajectories(JSON.stringify(records), 'agentgym', { knownEnvs }));
    expect(error.problems.map((p) => `${p.line}:${p.field}`)).toEqual(['1:item_id', '2:conversations[3]']);
    expect(error.message).toMatch(/record 1, field 'item_id': unknown environment 'sciworld'/);
  });

  it('refuses an episode id used twice in one file, naming both records', () => {
    const text = trajectoriesToJsonl([householdEpisode(), webshopEpisode(), householdEpisode()]);
    const error = importError(() => readTrajectories(text, 'ours', { knownEnvs }));
    expect(error.problems).toEqual([expect.objectContaining({ line: 3, field: 'id' })]);
    expect(error.message).toMatch(/line 3, field 'id': episode id '.*' is already used by line 1/);
  });

  it('gives an expert and a random episode of the same seed ids of their own in every chat format', () => {
    const expert = householdEpisode();
    const random = { ...householdEpisode(), id: 'household-v0/random/3', source: 'random' as const };
    for (const format of ['agentgym', 'eto', 'trl'] as const) {
      const back = readTrajectories(writeTrajectories([expert, random, expert], format), format, { knownEnvs });
      const digest = episodeDigest(expert);
      expect(back.map((t) => t.id)).toEqual([
        `alfworld_expert_3_${digest}`,
        `alfworld_random_3_${digest}`,
        `alfworld_expert_3_${digest}~2`,
      ]);
      expect(back.map((t) => [t.env, t.seed])).toEqual([
        ['household-v0', 3],
        ['household-v0', 3],
        ['household-v0', 3],
      ]);
    }
  });

  // Issue 31: ids were SHORT_SEED whatever the source, so two converted files collided in the buffer.
  it.each(['agentgym', 'eto', 'trl'] as const)(
    '%s: two files with the same seeds get ids that differ by source and content, stable through a round trip',
    (format) => {
      const expert = [householdEpisode(3), householdEpisode(4)];
      const other = expert.map((t) => ({
        ...t,
        id: t.id.replace('expert', 'random'),
        source: 'random' as const,
        steps: t.steps.map((s, i) => (i === 0 ? { ...s, action: 'look' } : s)),
      }));
      const idsOf = (ts: Trajectory[]) => readTrajectories(writeTrajectories(ts, format), format, { knownEnvs });
      const [first, second] = [idsOf(expert), idsOf(other)];
      expect(first.map((t) => t.seed)).toEqual(second.map((t) => t.seed));
      for (const t of [...first, ...second]) expect(t.id).toMatch(/^alfworld_(expert|random)_[34]_[0-9a-f]{8}$/);
      expect(new Set([...first, ...second].map((t) => t.id)).size).toBe(4);
      // Same source, same seed, different content: the digest still tells them apart.
      const sameSource = idsOf(other.map((t) => ({ ...t, source: 'expert' as const })));
      expect(sameSource.map((t) => t.id)).not.toEqual(first.map((t) => t.id));
      // Read back and written again (in any chat format), an episode keeps its id.
      for (const again of ['agentgym', 'eto', 'trl'] as const) {
        expect(readTrajectories(writeTrajectories(first, again), again, { knownEnvs }).map((t) => t.id)).toEqual(
          first.map((t) => t.id),
        );
      }
    },
  );
});
