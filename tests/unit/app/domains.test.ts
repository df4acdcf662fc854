/**
 * The Domains page's logic (fake-indexeddb): the form's checks, a file read as a domain (format
 * detected and named, a malformed file refused with its lines), the card in words, the IndexedDB
 * store (four rows in one transaction, replace only when asked, checksums checked on load), and
 * the page state that imports, seeds the replay buffer, lists, shows and deletes.
 */
import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { ReplayBuffer } from '../../../src/core/buffer/buffer';
import { MemoryBufferStore } from '../../../src/core/buffer/stores/memory';
import { DatasetImportError } from '../../../src/core/data/errors';
import { writeTrajectories } from '../../../src/core/data/formats';
import { DomainError } from '../../../src/core/domain/domain';
import { DomainExistsError, DomainStore, DomainStoreError } from '../../../src/app/storage/domain-store';
import {
  DEFAULT_IMPORT_SETTINGS,
  domainCardView,
  formProblems,
  nameFromFile,
  readDomain,
  type ImportSettings,
} from '../../../src/app/state/domains/domains';
import { DomainsState } from '../../../src/app/state/domains/domains.svelte';
import { foreignOurs } from '../domain/fixtures';

const settings = (over: Partial<ImportSettings> = {}): ImportSettings => ({
  ...DEFAULT_IMPORT_SETTINGS,
  name: 'myapp',
  ...over,
});
/** 12 household episodes as ETO records of an app the importer does not know. */
const etoText = async () => writeTrajectories(await foreignOurs(12), 'eto');
/** The same records one a line (JSONL), as ETO files are found too. */
const etoLines = async () =>
  (JSON.parse(await etoText()) as unknown[]).map((record) => JSON.stringify(record)).join('\n') + '\n';
const source = { file: 'app.jsonl', format: 'eto' as const, detected: true, unrecordedOutcome: 'unknown' as const };

describe('the import form', () => {
  it('checks the name and the held-out share as the CLI does', () => {
    expect(formProblems({ name: 'myapp', heldOutShare: 0.2 })).toEqual([]);
    expect(formProblems({ name: ' ', heldOutShare: 0.2 })).toEqual([expect.stringMatching(/Give the domain a name/)]);
    expect(formProblems({ name: '../base', heldOutShare: 0.2 })[0]).toMatch(/The name '..\/base' cannot name a domain/);
    expect(formProblems({ name: 'myapp', heldOutShare: 1 })[0]).toMatch(/held-out share must be between 0 and 1/);
  });

  it("suggests a name from the file's", () => {
    expect(nameFromFile('My App.eto.jsonl')).toBe('my-app');
    expect(nameFromFile('shop_logs-2024.json')).toBe('shop_logs-2024');
    expect(nameFromFile('.jsonl')).toBe('myapp');
    expect(formProblems({ name: nameFromFile(`${'x'.repeat(80)}.jsonl`), heldOutShare: 0.2 })).toEqual([]);
  });
});

describe('readDomain', () => {
  it('detects ETO, names it, and builds the domain as the CLI does', async () => {
    const { format, domain } = readDomain(await etoText(), 'app.jsonl', settings({ tasksText: 'a new task\n# no' }));
    expect(format).toBe('eto');
    expect(domain.envId).toBe('byo:myapp');
    expect(domain.stats).toMatchObject({ episodes: 12, extraTasks: 1 });
    expect(domain.train.length + domain.heldOut.length).toBe(12);
  });

  it('says what a file read as the wrong format looks like', async () => {
    let wrong: unknown;
    try {
      readDomain(await etoText(), 'app.jsonl', settings({ format: 'ours' }));
    } catch (e) {
      wrong = e;
    }
    expect(wrong).toBeInstanceOf(DatasetImportError);
    expect((wrong as Error).message).toMatch(/The file looks like eto .* import it as eto/);
  });

  it('rejects a malformed file whole, with line numbers, and too few episodes with the reason', async () => {
    const lines = (await etoLines()).trim().split('\n');
    const bad = [lines[0], '{"id": 3, "conversations": []}', 'not json', ...lines.slice(1)].join('\n');
    expect(() => readDomain(bad, 'bad.jsonl', settings())).toThrow(
      /Cannot import bad\.jsonl: .*\n {2}line 2.*\n {2}line 3/,
    );
    const few = lines.slice(0, 3).join('\n');
    expect(() => readDomain(few, 'few.jsonl', settings())).toThrow(DomainError);
    expect(() => readDomain(few, 'few.jsonl', settings())).toThrow(/Too few episodes: found 3/);
  });
});

describe('the card', () => {
  it('says the split, tasks, admissible lists, endings, action kinds and warnings', async () => {
    const { domain } = readDomain(await etoText(), 'app.jsonl', settings());
    const manifest = (await new DomainStore('domains-card').save(domain, source, { createdAt: 1 })).manifest;
    const view = domainCardView(manifest, domain);
    const fact = (key: string) => view.facts.find((f) => f.key === key)?.value;
    const s = domain.stats;
    expect(fact('source')).toBe('app.jsonl, read as eto (detected from its records)');
    expect(fact('episodes')).toMatch(
      new RegExp(`^12: ${s.trainEpisodes} to train on, ${s.heldOutEpisodes} held out \\(split by task, share 20%`),
    );
    expect(fact('admissible')).toBe(`recorded on 0 of ${s.steps} steps; inferred from the data on ${s.steps}`);
    expect(fact('outcomes')).toMatch(/^\d+ succeed, 0 fail, \d+ hit the step limit, 0 unrecorded, of 12 episodes/);
    expect(view.actionKinds[0]).toEqual({
      kind: s.actionKinds[0].kind,
      count: String(s.actionKinds[0].count),
      example: s.actionKinds[0].example,
    });
    expect(view.warnings.some((w) => /listed no admissible actions/.test(w))).toBe(true);
    expect(view.warnings.some((w) => /^No failed endings/.test(w))).toBe(true);
    expect(view.cardText).toBe(domain.card.text);
    expect(view.commands).toEqual({
      import: 'npm run dreamgym -- domain import app.jsonl --name myapp --format eto',
      model: 'npm run dreamgym -- expmodel train --domain myapp --out runs/models/myapp',
      train: 'npm run dreamgym -- domain train --name myapp --llm learned:runs/models/myapp',
    });
  });
});

describe('the domain store (IndexedDB)', () => {
  it('stores a domain whole, replaces only when asked, lists and removes', async () => {
    const store = new DomainStore('domains-store-1');
    const { domain } = readDomain(await etoText(), 'app.jsonl', settings());
    expect((await store.save(domain, source, { createdAt: 5 })).replaced).toBe(false);
    expect(await store.read('myapp')).toEqual({ manifest: expect.objectContaining({ createdAt: 5 }), domain });

    const other = readDomain(await etoText(), 'app.jsonl', settings({ heldOutShare: 0.4 })).domain;
    await expect(store.save(other, source, { createdAt: 6 })).rejects.toThrow(DomainExistsError);
    await expect(store.save(other, source, { createdAt: 6 })).rejects.toThrow(/already stored .* nothing was written/);
    expect((await store.read('myapp'))?.domain.heldOutShare).toBe(0.2);
    expect((await store.save(other, source, { createdAt: 6, replace: true })).replaced).toBe(true);
    expect((await store.read('myapp'))?.domain).toEqual(other);

    await store.save({ ...domain, name: 'second', envId: 'byo:second' }, source, { createdAt: 7 });
    expect((await store.list()).map((e) => e.name)).toEqual(['second', 'myapp']); // newest first
    await store.remove('myapp');
    expect(await store.read('myapp')).toBeNull();
    expect((await store.list()).map((e) => e.name)).toEqual(['second']);
    await store.close();
  });

  it('checks every row against its checksum on load', async () => {
    const store = new DomainStore('domains-store-2');
    const { domain } = readDomain(await etoText(), 'app.jsonl', settings());
    await store.save(domain, source, { createdAt: 1 });
    await store.close();
    const raw = await openDB('domains-store-2');
    const row = await raw.get('train', 'myapp');
    await raw.put('train', { ...row, text: row.text.replace('"reward":0', '"reward":1') });
    const manifest = await raw.get('manifests', 'myapp');
    raw.close();
    await expect(store.read('myapp')).rejects.toThrow(DomainStoreError);
    await expect(store.read('myapp')).rejects.toThrow(
      /'myapp' is damaged \(the checksum of its training episodes is not the manifest's\): delete it/,
    );
    expect((await store.list())[0].manifest?.name).toBe('myapp'); // the manifest itself is sound

    const again = await openDB('domains-store-2');
    await again.put('manifests', { ...manifest, text: manifest.text.replace('"createdAt":1', '"createdAt":2') });
    again.close();
    await store.close();
    expect((await store.list())[0]).toEqual({
      name: 'myapp',
      damaged: expect.stringMatching(/its manifest does not match its checksum/),
    });
    await store.close();
  });
});

describe('the Domains page state', () => {
  /** A memory buffer that outlives the page's close (the test reads what an import added). */
  class KeptOpen extends MemoryBufferStore {
    override async close(): Promise<void> {}
  }
  function pageState(dbName: string, store = new KeptOpen()) {
    const state = new DomainsState({
      store: new DomainStore(dbName),
      openBuffer: async () => new ReplayBuffer(store),
      now: () => 1000,
    });
    return { state, buffer: new ReplayBuffer(store) };
  }

  it('imports a picked file, names its format, stores it, seeds the buffer and shows the card', async () => {
    const { state, buffer } = pageState('domains-page-1');
    await state.refresh();
    expect(state.entries).toEqual([]);
    state.chooseFile(new File([await etoText()], 'Shop Logs.jsonl'));
    expect(state.settings.name).toBe('shop-logs');
    await state.importChosen();
    expect(state.error).toBeNull();
    expect(state.message).toMatch(/^Shop Logs\.jsonl: read as eto \(detected from its records\)\. Stored the domain/);
    expect(state.message).toMatch(/Replay buffer: byo:shop-logs: \d+ episodes added/);
    expect(state.entries?.map((e) => e.name)).toEqual(['shop-logs']);
    expect(state.selected?.view.name).toBe('shop-logs');
    const train = state.selected!.manifest.stats.trainEpisodes;
    expect((await buffer.store.listEpisodes({ env: 'byo:shop-logs' })).length).toBe(train);
    expect(state.file).toBeNull();
  });

  it('refuses a taken name unless asked to replace, and a malformed file with its lines', async () => {
    const { state } = pageState('domains-page-2');
    await state.refresh();
    const text = await etoText();
    state.chooseFile(new File([text], 'app.jsonl'));
    await state.importChosen();
    expect(state.nameTaken).toBe(true);
    state.chooseFile(new File([text], 'app.jsonl'));
    await state.importChosen();
    expect(state.error).toMatch(/A domain named 'app' is already stored/);
    state.settings.replace = true;
    await state.importChosen();
    expect(state.error).toBeNull();
    expect(state.message).toMatch(/replacing the one of that name/);
    expect(state.settings.replace).toBe(false);

    state.chooseFile(new File([`${await etoLines()}{"id": 1}\n`], 'bad.jsonl'));
    state.settings.name = 'bad';
    await state.importChosen();
    expect(state.error).toMatch(
      /Cannot import bad\.jsonl: 2 problems found, nothing was imported\.\n {2}line 13, field 'id'/,
    );
    expect(state.entries?.map((e) => e.name)).toEqual(['app']);
  });

  it('deletes a domain, and its episodes from the replay buffer; shows the newest on refresh', async () => {
    const kept = new KeptOpen();
    const { state, buffer } = pageState('domains-page-3', kept);
    await state.refresh();
    state.chooseFile(new File([await etoText()], 'one.jsonl'));
    await state.importChosen();
    state.chooseFile(new File([await etoText()], 'two.jsonl'));
    await state.importChosen();
    const reopened = pageState('domains-page-3', kept).state;
    await reopened.refresh(); // a reload: the list and the newest card come back
    expect(['one', 'two']).toContain(reopened.selected?.view.name); // both were made at the same (fake) time
    const held = (await buffer.store.listTransitions({ env: 'byo:one' })).length;
    expect(held).toBeGreaterThan(0);
    await reopened.remove('one');
    expect(reopened.entries?.map((e) => e.name)).toEqual(['two']);
    expect(reopened.message).toMatch(new RegExp(`and its ${held.toLocaleString('en-US')} transitions from the replay`));
    expect(await buffer.store.listTransitions({ env: 'byo:one' })).toEqual([]);
    expect((await buffer.store.listEpisodes({ env: 'byo:one' })).length).toBe(0);
    expect((await buffer.store.listTransitions({ env: 'byo:two' })).length).toBeGreaterThan(0); // the other stays
  });
});
