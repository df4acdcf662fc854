/**
 * State of the Domains page: import an application's trajectories as a domain (a file picked or
 * dropped, read and built as `dreamgym domain import` does), store it in this browser
 * (workers/domain-store.ts), seed the page's replay buffer with its training episodes, list the
 * stored domains, show one's card, delete one. Every text shown is plain text, never HTML.
 */
import { ReplayBuffer } from '../../../core/buffer/buffer';
import { IndexedDbBufferStore } from '../../../core/buffer/stores/indexeddb';
import { DatasetImportError } from '../../../core/data/errors';
import { domainEnvId, type Domain } from '../../../core/domain/domain';
import { DomainStore, type StoredDomainEntry, type StoredDomainManifest } from '../../storage/domain-store';
import { importSummary } from '../buffer/buffer-view';
import {
  DEFAULT_IMPORT_SETTINGS,
  domainCardView,
  formProblems,
  nameFromFile,
  readAsLine,
  readDomain,
  type DomainCardView,
  type ImportSettings,
} from './domains';

export interface DomainsDeps {
  store: DomainStore;
  /** The page's replay buffer, opened for one import (its store is closed after). */
  openBuffer: () => Promise<ReplayBuffer>;
  now: () => number;
}

function pageDeps(): DomainsDeps {
  return {
    store: new DomainStore(),
    openBuffer: async () => new ReplayBuffer(await IndexedDbBufferStore.open()),
    now: () => Date.now(),
  };
}

/** An error as text; a file that looks like another format says so first (before its list of problems). */
const messageOf = (e: unknown) =>
  e instanceof DatasetImportError && e.hint ? `${e.hint}\n${e.message}` : e instanceof Error ? e.message : String(e);

export class DomainsState {
  /** The stored domains, newest first (null: not read yet). */
  entries = $state.raw<StoredDomainEntry[] | null>(null);
  /** The domain whose card is shown. */
  selected = $state.raw<{ manifest: StoredDomainManifest; view: DomainCardView } | null>(null);
  settings = $state<ImportSettings>({ ...DEFAULT_IMPORT_SETTINGS });
  file = $state.raw<File | null>(null);
  busy = $state(false);
  /** What the last action did, in words. */
  message = $state<string | null>(null);
  /** The last error, as text (a DatasetImportError lists lines and fields, a DomainError every problem). */
  error = $state<string | null>(null);
  /** The name of the domain whose delete waits for a confirmation. */
  confirmingDelete = $state<string | null>(null);
  /** Why the form cannot import yet (empty: it can). */
  readonly problems = $derived(formProblems(this.settings));
  /** A domain of the form's name is stored (an import then needs replace). */
  readonly nameTaken = $derived(this.entries?.some((e) => e.name === this.settings.name.trim()) ?? false);
  /** The name the last chosen file suggested: replaced by the next file's unless the user typed one. */
  private suggestedName = '';

  constructor(private readonly deps: DomainsDeps = pageDeps()) {}

  /** Runs one action with the busy flag, and its error shown as text. */
  private async run(action: () => Promise<void>): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      await action();
    } catch (e) {
      this.error = messageOf(e);
    } finally {
      this.busy = false;
    }
  }

  /** Reads the list; shows the newest domain's card when none is shown. */
  async refresh(): Promise<void> {
    await this.run(async () => {
      await this.readList();
      const first = this.entries?.find((e) => e.manifest);
      if (!this.selected && first) await this.show(first.name);
    });
  }

  private async readList(): Promise<void> {
    this.entries = await this.deps.store.list();
  }

  /** The file to import (picked or dropped); its name suggests the domain's unless the user typed one. */
  chooseFile(file: File | null): void {
    this.file = file;
    this.message = null;
    this.error = null;
    if (!file) return;
    const name = this.settings.name.trim();
    if (name === '' || name === this.suggestedName) {
      this.suggestedName = nameFromFile(file.name);
      this.settings.name = this.suggestedName;
    }
  }

  /** Extra task descriptions from a text file (one a line), into the form's text area. */
  async loadTasksFile(file: File): Promise<void> {
    await this.run(async () => {
      this.settings.tasksText = await file.text();
    });
  }

  /** Reads the chosen file as a domain, stores it, shows its card and seeds the replay buffer. */
  async importChosen(): Promise<void> {
    await this.run(async () => {
      this.message = null;
      const file = this.file;
      if (!file) throw new Error('Choose a file of trajectories, or drop one on this page, first.');
      if (this.problems.length > 0) throw new Error(this.problems.join('\n'));
      const settings = $state.snapshot(this.settings);
      const text = await file.text();
      await new Promise((resolve) => setTimeout(resolve, 0)); // let "Working…" show before the reading
      const { format, domain } = readDomain(text, file.name, settings);
      const source = {
        file: file.name,
        format,
        detected: settings.format === 'auto',
        unrecordedOutcome: settings.unrecordedOutcome,
      };
      const saved = await this.deps.store.save(domain, source, {
        createdAt: this.deps.now(),
        replace: settings.replace,
      });
      this.selected = { manifest: saved.manifest, view: domainCardView(saved.manifest, domain) };
      this.message =
        `${file.name}: ${readAsLine(format, source.detected)}. Stored the domain '${domain.name}' ` +
        `(${domain.envId}) in this browser${saved.replaced ? ', replacing the one of that name' : ''}.`;
      this.file = null;
      this.settings.replace = false;
      await this.readList();
      // A replaced domain's episodes go first: its old split may hold episodes the new one holds out.
      if (saved.replaced) await this.dropFromBuffer(domain.envId);
      await this.seedBuffer(domain);
    });
  }

  /**
   * Adds the training episodes to the page's replay buffer as offline data, as the CLI's import
   * seeds the domain's buffer (a second time adds nothing). The domain stays stored if this fails.
   */
  private async seedBuffer(domain: Domain): Promise<void> {
    try {
      const buffer = await this.deps.openBuffer();
      try {
        const result = await buffer.importTrajectories(domain.train, { source: 'offline', createdAt: this.deps.now() });
        this.message = `${this.message ?? ''} Replay buffer: ${importSummary(domain.envId, result)}.`.trim();
      } finally {
        await buffer.store.close();
      }
    } catch (e) {
      throw new Error(
        `The domain '${domain.name}' is stored, but its training episodes are not in the replay buffer: ` +
          `${messageOf(e)} Try "Add to the replay buffer" on its card.`,
        { cause: e },
      );
    }
  }

  /** Removes every transition of a domain's env from the page's replay buffer; how many. */
  private async dropFromBuffer(envId: string): Promise<number> {
    const buffer = await this.deps.openBuffer();
    try {
      const sources = ['offline', 'real', 'dream'] as const;
      return await buffer.evict({ env: envId, sources: [...sources], maxTransitions: 0 });
    } finally {
      await buffer.store.close();
    }
  }

  /** Adds a stored domain's training episodes to the replay buffer (again, after a clear). */
  async addToBuffer(name: string): Promise<void> {
    await this.run(async () => {
      this.message = null;
      const stored = await this.deps.store.read(name);
      if (!stored) throw new Error(`No domain named '${name}' is stored in this browser.`);
      await this.seedBuffer(stored.domain);
    });
  }

  /** Shows the card of a stored domain, read whole and checked. */
  async select(name: string): Promise<void> {
    await this.run(() => this.show(name));
  }

  private async show(name: string): Promise<void> {
    const stored = await this.deps.store.read(name);
    if (!stored) throw new Error(`No domain named '${name}' is stored in this browser.`);
    this.selected = { manifest: stored.manifest, view: domainCardView(stored.manifest, stored.domain) };
  }

  /** Deletes a stored domain (after the page's confirmation). */
  async remove(name: string): Promise<void> {
    await this.run(async () => {
      this.confirmingDelete = null;
      await this.deps.store.remove(name);
      if (this.selected?.manifest.name === name) this.selected = null;
      const dropped = await this.dropFromBuffer(domainEnvId(name));
      this.message =
        `Deleted the domain '${name}', and its ${dropped.toLocaleString('en-US')} transitions from the replay ` +
        `buffer (${domainEnvId(name)}).`;
      await this.readList();
    });
  }

  async close(): Promise<void> {
    await this.deps.store.close();
  }
}
