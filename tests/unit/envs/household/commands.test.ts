import { describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/core/rng';
import { renderList } from '../../../../src/core/envs/household';
import { extractAction, isAdmissible, parseCommand } from '../../../../src/core/envs/household/commands';
import { play, world } from './helpers';

const kitchen = () =>
  world(
    'kitchen',
    [
      'toaster 1',
      'cabinet 1',
      'cabinet 2',
      'countertop 1',
      'fridge 1',
      'microwave 1',
      'sinkbasin 1',
      'diningtable 1',
      'coffeemachine 1',
      'garbagecan 1',
    ],
    {
      'apple 1': 'countertop 1',
      'egg 3': 'countertop 1',
      'lettuce 1': 'fridge 1',
      'tomato 1': 'fridge 1',
      'mug 1': 'cabinet 2',
    },
  );
const cleanLettuce = { type: 'clean', object: 'lettuce', receptacle: 'diningtable' } as const;

const bedroom = () =>
  world('bedroom', ['bed 1', 'desk 1', 'sidetable 1', 'drawer 1'], {
    'desklamp 1': 'desk 1',
    'book 1': 'bed 1',
    'floorlamp 1': 'sidetable 1',
    'pen 1': 'drawer 1',
  });
const lookBook = { type: 'look', object: 'book', toggle: 'desklamp' } as const;

describe('household text', () => {
  it('renders lists the ALFWorld way', () => {
    expect(renderList([])).toBe('nothing');
    expect(renderList(['apple 1'])).toBe('a apple 1');
    expect(renderList(['apple 3', 'egg 3'])).toBe('a apple 3, and a egg 3');
    expect(renderList(['apple 1', 'bread 2', 'cup 1'])).toBe('a apple 1, a bread 2, and a cup 1');
  });

  it('writes the reset text: banner, receptacles alphabetical with numbers descending, task', () => {
    const { first } = play(kitchen(), cleanLettuce);
    expect(first.text).toBe(
      '-= Welcome to TextWorld, ALFRED! =-\n\n' +
        'You are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, a coffeemachine 1, ' +
        'a countertop 1, a diningtable 1, a fridge 1, a garbagecan 1, a microwave 1, a sinkbasin 1, and a toaster 1.\n\n' +
        'Your task is to: put a clean lettuce in diningtable.',
    );
    expect(first.task.instruction).toBe('put a clean lettuce in diningtable.');
  });

  it('lists two-digit numbers descending', () => {
    const receptacles = Array.from({ length: 11 }, (_, i) => `cabinet ${i + 1}`).concat(['countertop 1']);
    const { first } = play(world('kitchen', receptacles, { 'apple 1': 'countertop 1' }), {
      type: 'place',
      object: 'apple',
      receptacle: 'cabinet',
    });
    expect(first.text).toContain('you see a cabinet 11, a cabinet 10, a cabinet 9, a cabinet 8,');
    expect(first.text).toContain('a cabinet 1, and a countertop 1.\n\n');
  });
});

describe('household commands', () => {
  it('go to: always allowed, describes closed, open-surface and empty receptacles', () => {
    const { env, first } = play(kitchen(), cleanLettuce);
    expect(first.admissible).toContain('go to fridge 1');
    expect(env.stepSync('go to fridge 1').text).toBe('You arrive at fridge 1. The fridge 1 is closed.');
    expect(env.stepSync('go to countertop 1').text).toBe(
      'You arrive at countertop 1. On the countertop 1, you see a apple 1, and a egg 3.',
    );
    expect(env.stepSync('go to diningtable 1').text).toBe(
      'You arrive at diningtable 1. On the diningtable 1, you see nothing.',
    );
    const again = env.stepSync('go to diningtable 1');
    expect(again.info.valid).toBe(true);
    expect(again.text).toBe('You arrive at diningtable 1. On the diningtable 1, you see nothing.');
  });

  it('open / close: only at the receptacle, only doors, only in the right state', () => {
    const { env } = play(kitchen(), cleanLettuce);
    expect(env.stepSync('open fridge 1').info.valid).toBe(false); // not there
    env.stepSync('go to countertop 1');
    expect(env.stepSync('open countertop 1').info.valid).toBe(false); // no door
    env.stepSync('go to fridge 1');
    expect(env.stepSync('close fridge 1').info.valid).toBe(false); // already closed
    const opened = env.stepSync('open fridge 1');
    expect(opened.text).toBe(
      'You open the fridge 1. The fridge 1 is open. In it, you see a lettuce 1, and a tomato 1.',
    );
    expect(opened.admissible).toContain('close fridge 1');
    expect(opened.admissible).not.toContain('open fridge 1');
    expect(env.stepSync('open fridge 1').info.valid).toBe(false);
    expect(env.stepSync('examine fridge 1').text).toBe(
      'The fridge 1 is open. In it, you see a lettuce 1, and a tomato 1.',
    );
    expect(env.stepSync('close fridge 1').text).toBe('You close the fridge 1.');
    expect(env.stepSync('go to fridge 1').text).toBe('You arrive at fridge 1. The fridge 1 is closed.');
    env.stepSync('go to cabinet 1');
    expect(env.stepSync('open cabinet 1').text).toBe(
      'You open the cabinet 1. The cabinet 1 is open. In it, you see nothing.',
    );
  });

  it('take: at the receptacle, door open, hands empty, portable objects only', () => {
    const { env } = play(kitchen(), cleanLettuce);
    expect(env.stepSync('take apple 1 from countertop 1').info.valid).toBe(false); // not there
    env.stepSync('go to fridge 1');
    expect(env.stepSync('take lettuce 1 from fridge 1').info.valid).toBe(false); // closed
    env.stepSync('open fridge 1');
    expect(env.stepSync('take apple 1 from fridge 1').info.valid).toBe(false); // not in it
    const took = env.stepSync('take lettuce 1 from fridge 1');
    expect(took.info.valid).toBe(true);
    expect(took.text).toBe('You pick up the lettuce 1 from the fridge 1.');
    expect(took.admissible.filter((a) => a.startsWith('take '))).toEqual([]); // hands full
    expect(env.stepSync('take tomato 1 from fridge 1').info.valid).toBe(false);
    expect(env.stepSync('inventory').text).toBe('You are carrying: a lettuce 1.');

    const lamp = play(bedroom(), lookBook).env;
    lamp.stepSync('go to desk 1');
    expect(lamp.stepSync('take desklamp 1 from desk 1').info.valid).toBe(false);
  });

  it('put (put_in_on dialect): literal "in/on", canContain and open door required', () => {
    const { env } = play(kitchen(), cleanLettuce);
    env.stepSync('go to countertop 1');
    env.stepSync('take apple 1 from countertop 1');
    env.stepSync('go to coffeemachine 1');
    const atMachine = env.stepSync('look');
    expect(atMachine.admissible.some((a) => a.startsWith('put '))).toBe(false); // a coffeemachine holds no apple
    expect(env.stepSync('put apple 1 in/on coffeemachine 1').info.valid).toBe(false);
    env.stepSync('go to microwave 1');
    expect(env.stepSync('put apple 1 in/on microwave 1').info.valid).toBe(false); // closed
    env.stepSync('go to diningtable 1');
    const before = env.stepSync('look');
    expect(before.admissible).toContain('put apple 1 in/on diningtable 1');
    const put = env.stepSync('put apple 1 in/on diningtable 1');
    expect(put.text).toBe('You put the apple 1 in/on the diningtable 1.');
    expect(env.stepSync('examine diningtable 1').text).toBe('On the diningtable 1, you see a apple 1.');
    expect(env.stepSync('inventory').text).toBe('You are not carrying anything.');
  });

  it('put (move_to dialect) and the accepted aliases', () => {
    const { env } = play(kitchen(), cleanLettuce, 'move_to');
    env.stepSync('go to countertop 1');
    const took = env.stepSync('take egg 3 from countertop 1');
    expect(took.admissible).toContain('move egg 3 to countertop 1');
    expect(took.admissible.some((a) => a.startsWith('put '))).toBe(false);
    expect(env.stepSync('move egg 3 to countertop 1').text).toBe('You move the egg 3 to the countertop 1.');
    env.stepSync('take egg 3 from countertop 1');
    expect(env.stepSync('put egg 3 on countertop 1').text).toBe('You move the egg 3 to the countertop 1.');

    const other = play(kitchen(), cleanLettuce).env;
    other.stepSync('go to countertop 1');
    other.stepSync('take egg 3 from countertop 1');
    expect(other.stepSync('put egg 3 in countertop 1').text).toBe('You put the egg 3 in/on the countertop 1.');
  });

  it('heat / cool / clean: holding a fitting object at the appliance (door may be closed)', () => {
    const { env } = play(kitchen(), cleanLettuce);
    env.stepSync('go to countertop 1');
    env.stepSync('take apple 1 from countertop 1');
    expect(env.stepSync('heat apple 1 with microwave 1').info.valid).toBe(false); // not there
    expect(env.stepSync('examine apple 1').text).toBe("There's nothing special about apple 1.");
    const atMicrowave = env.stepSync('go to microwave 1');
    expect(atMicrowave.text).toBe('You arrive at microwave 1. The microwave 1 is closed.');
    expect(atMicrowave.admissible).toContain('heat apple 1 with microwave 1');
    expect(env.stepSync('cool apple 1 with microwave 1').info.valid).toBe(false);
    expect(env.stepSync('heat apple 1 with microwave 1').text).toBe('You heat the apple 1 using the microwave 1.');
    expect(env.stepSync('examine apple 1').text).toBe('This is a hot apple 1.');
    env.stepSync('go to sinkbasin 1');
    expect(env.stepSync('clean apple 1 with sinkbasin 1').text).toBe('You clean the apple 1 using the sinkbasin 1.');
    expect(env.stepSync('examine apple 1').text).toBe('This is a hot and clean apple 1.');
    env.stepSync('go to fridge 1');
    expect(env.stepSync('cool apple 1 with fridge 1').text).toBe('You cool the apple 1 using the fridge 1.');
    expect(env.stepSync('examine apple 1').text).toBe('This is a cold and clean apple 1.');
  });

  it('heat / cool / clean refuse objects without the property', () => {
    const { env } = play(kitchen(), cleanLettuce);
    env.stepSync('go to fridge 1');
    env.stepSync('open fridge 1');
    env.stepSync('take lettuce 1 from fridge 1');
    env.stepSync('go to microwave 1');
    expect(env.stepSync('heat lettuce 1 with microwave 1').info.valid).toBe(false); // lettuce is not heatable
    env.stepSync('go to sinkbasin 1');
    expect(env.stepSync('clean lettuce 1 with sinkbasin 1').info.valid).toBe(true);
    env.stepSync('put lettuce 1 in/on sinkbasin 1');
    env.stepSync('go to cabinet 2');
    env.stepSync('open cabinet 2');
    env.stepSync('take mug 1 from cabinet 2');
    env.stepSync('go to fridge 1');
    expect(env.stepSync('cool mug 1 with fridge 1').info.valid).toBe(true);
  });

  it('use: toggles a lamp in the receptacle the agent is at', () => {
    const { env, first } = play(bedroom(), lookBook);
    expect(first.admissible.some((a) => a.startsWith('use '))).toBe(false);
    expect(env.stepSync('use desklamp 1').info.valid).toBe(false);
    const atDesk = env.stepSync('go to desk 1');
    expect(atDesk.text).toBe('You arrive at desk 1. On the desk 1, you see a desklamp 1.');
    expect(atDesk.admissible).toContain('use desklamp 1');
    expect(env.stepSync('use floorlamp 1').info.valid).toBe(false); // not here
    expect(env.stepSync('use desklamp 1').text).toBe('You turn on the desklamp 1.');
    expect(env.stepSync('use desklamp 1').text).toBe('You turn off the desklamp 1.');
  });

  it('look, inventory and examine', () => {
    const { env, first } = play(bedroom(), lookBook);
    expect(env.stepSync('look').text).toBe(first.text.split('\n\n')[1]);
    expect(env.stepSync('inventory').text).toBe('You are not carrying anything.');
    expect(env.stepSync('examine bed 1').info.valid).toBe(false); // not there
    expect(env.stepSync('examine book 1').info.valid).toBe(false);
    env.stepSync('go to bed 1');
    expect(env.stepSync('look').text).toBe('You are facing the bed 1. Next to it, you see nothing.');
    expect(env.stepSync('examine bed 1').text).toBe('On the bed 1, you see a book 1.');
    expect(env.stepSync('examine book 1').text).toBe("There's nothing special about book 1.");
    env.stepSync('go to drawer 1');
    expect(env.stepSync('examine pen 1').info.valid).toBe(false); // behind a closed door
    expect(env.stepSync('examine drawer 1').text).toBe('The drawer 1 is closed.');
  });

  it('an inadmissible or unparsable action is a no-op that keeps the previous observation', () => {
    const { env } = play(kitchen(), cleanLettuce);
    const at = env.stepSync('go to countertop 1');
    for (const bad of [
      'take lettuce 1 from fridge 1',
      'fly to the moon',
      'go to sofa 1',
      '',
      'heat apple 1 with microwave 1',
    ]) {
      const r = env.stepSync(bad);
      expect(r.info.valid).toBe(false);
      expect(r.reward).toBe(0);
      expect(r.terminated).toBe(false);
      expect(r.text).toBe(at.text);
      expect(r.admissible).toEqual(at.admissible);
    }
    expect(env.stepSync('x').info.steps).toBe(7);
  });

  it('accepts the bare command, the last "Action:" or ">" line, and <action> tags', () => {
    expect(extractAction('go to fridge 1')).toBe('go to fridge 1');
    expect(extractAction('Think: the lettuce is cold.\nAction: go to fridge 1\n')).toBe('go to fridge 1');
    expect(extractAction('Action: look\nAction: Go To  Fridge 1.')).toBe('go to fridge 1');
    expect(extractAction('> open fridge 1')).toBe('open fridge 1');
    expect(extractAction('thinking...\n> inventory')).toBe('inventory');
    expect(extractAction('I will <action>look</action>')).toBe('look');
    const { env } = play(kitchen(), cleanLettuce);
    expect(env.stepSync('Think: start at the fridge.\nAction: go to fridge 1').text).toBe(
      'You arrive at fridge 1. The fridge 1 is closed.',
    );
  });

  it('lists admissible commands sorted, de-duplicated, and exactly the ones that are valid', () => {
    for (const [spec, goal] of [
      [kitchen(), cleanLettuce],
      [bedroom(), lookBook],
    ] as const) {
      const { env, first } = play(spec, goal);
      const rng = Rng.fromSeed(3, 'admissible');
      let obs = first;
      const w = env.state!;
      const names = [...w.receptacles.map((r) => r.name), ...w.objects.map((o) => o.name)];
      const candidates = ['look', 'inventory'];
      for (const a of names) {
        candidates.push(`go to ${a}`, `open ${a}`, `close ${a}`, `use ${a}`, `examine ${a}`);
        for (const b of names)
          for (const v of [
            'take {a} from {b}',
            'put {a} in/on {b}',
            'heat {a} with {b}',
            'cool {a} with {b}',
            'clean {a} with {b}',
          ]) {
            candidates.push(v.replace('{a}', a).replace('{b}', b));
          }
      }
      for (let t = 0; t < 200 && obs.admissible.length > 0; t++) {
        expect(obs.admissible).toEqual([...new Set(obs.admissible)].sort());
        const listed = new Set(obs.admissible);
        const mismatches = candidates.filter((c) => {
          const command = parseCommand(w, c);
          return (command !== null && isAdmissible(w, command)) !== listed.has(c);
        });
        expect(mismatches).toEqual([]);
        const r = env.stepSync(rng.pick(obs.admissible));
        expect(r.info.valid).toBe(true);
        obs = r;
      }
    }
  });

  it('ends the episode with reward 1 when the goal holds, then lists nothing', () => {
    const { env } = play(kitchen(), cleanLettuce);
    const plan = [
      'go to fridge 1',
      'open fridge 1',
      'take lettuce 1 from fridge 1',
      'go to sinkbasin 1',
      'clean lettuce 1 with sinkbasin 1',
      'go to diningtable 1',
    ];
    for (const a of plan) {
      const r = env.stepSync(a);
      expect(r.reward).toBe(0);
      expect(r.terminated).toBe(false);
    }
    const last = env.stepSync('put lettuce 1 in/on diningtable 1');
    expect(last).toMatchObject({ reward: 1, terminated: true, truncated: false, admissible: [] });
    expect(last.info).toMatchObject({ valid: true, success: true, score: 1, steps: 7 });
    expect(env.expertAction()).toBeNull();
  });
});
