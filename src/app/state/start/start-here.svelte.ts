/**
 * State of the start-here page: the three DreamGym runs (real, dream, S2R) trained side by side,
 * each in its own trainer worker, with their metric histories for the live charts and the DreamGym
 * table. One session lives for the whole app (provided by context from App.svelte): leaving the
 * page does not stop the runs, and a reload resumes unfinished ones from their checkpoints (the
 * Train page leaves runs tagged 'start-here' to this page). S2R's worker starts when the dream has
 * finished, from the dream's final checkpoint (one dream for two cards); meanwhile its card shows
 * the dream's curve. The environment of the next group is the page's choice (choose; webshop by default), and a
 * restored group brings back its own. Plain logic is in start-here.ts.
 */
import { getContext, setContext } from 'svelte';
import type { TrainConfig } from '../../../core/train/config';
import type { IterationRecord } from '../../../core/train/loop';
import type { LiveProgress } from '../../../core/train/progress';
import { TrainerClient } from '../../workers/trainer/trainer-client';
import type { TrainerProgress, TrainerStatus } from '../../workers/trainer/trainer-protocol';
import { MetricsHistoryStore } from '../../storage/metrics-store';
import { isUnfinished, loadRuns, upsertRun, type RunEntry } from '../../storage/run-list';
import { engineSetup } from '../setup/engine.svelte';
import { dreamEngineOfSpec } from '../setup/engine';
import { learnedPathOfSpec } from '../setup/learned-path';
import { StartHereClock } from './start-here-clock.svelte';
import {
  groupEntries,
  groupEnv,
  lastTimeKey,
  latestGroup,
  S2R_WAITS,
  s2rNext,
  s2rStopped,
  START_HERE_DEFAULT,
  startHereConfigs,
  startHereEnv,
  startHereEnvFromQuery,
  startHereRuns,
  type StartHereEngine,
  type StartHereEnv,
  type StartHereRun,
} from './start-here';

export interface StartHereSlot {
  run: StartHereRun;
  entry: RunEntry;
  status: TrainerStatus;
  /** Every iteration record so far (the worker streams them; a resumed run gets its saved history first). */
  history: IterationRecord[];
  /** Progress inside the iteration in flight (steps, speed, time left), null between iterations. */
  live: LiveProgress | null;
  /** S2R waiting for the dream it continues (its history and counters are then the dream's). */
  waiting: boolean;
  /** The run's status messages in order since the page loaded (its worker's, and the wait). */
  log: string[];
}

const TRAINING: readonly string[] = ['starting', 'running', 'paused'];

const statusOf = (entry: RunEntry, message: string): TrainerStatus => ({
  runId: entry.runId,
  state: entry.state,
  iteration: entry.iteration,
  iterations: entry.iterations,
  realSteps: 0,
  dreamSteps: 0,
  backend: null,
  backendReason: null,
  decoding: null,
  message,
});

/** Appends records, replacing any at or after the first new iteration (an iteration repeated after a reload). */
function appended(history: readonly IterationRecord[], records: readonly IterationRecord[]): IterationRecord[] {
  if (records.length === 0) return history as IterationRecord[];
  return [...history.filter((r) => r.iteration < records[0].iteration), ...records];
}

/** Resolves in a later task, so the browser can paint and handle input in between. */
const nextTask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export class StartHereSession {
  slots = $state.raw<StartHereSlot[]>([]);
  engine = $state.raw<StartHereEngine | null>(null);
  error = $state<string | null>(null);
  /** Bumped on every message from a run (pages that read the run list from storage refresh on it). */
  progress = $state(0);
  starting = $state(false);
  /** Stop was pressed and the workers have not all answered yet. */
  stopping = $state(false);
  /** The environment the next group trains on (the page's choice; a restored group's own). */
  choice = $state.raw<StartHereEnv>(START_HERE_DEFAULT);
  /** The group's time estimates: the speed check before the click, the time left while they train. */
  readonly clock = new StartHereClock();

  private readonly clients = new Map<string, TrainerClient>();
  /** The S2R run while its dream trains, and whether it resumes (after a reload) or starts. */
  private waitingS2r: { entry: RunEntry; resume: boolean } | null = null;
  private readonly history = new MetricsHistoryStore();

  constructor(restore = true) {
    if (restore && typeof window !== 'undefined') void this.restore();
  }

  get active(): boolean {
    return this.starting || this.slots.some((s) => TRAINING.includes(s.status.state));
  }
  get finished(): boolean {
    return this.slots.length > 0 && this.slots.every((s) => s.status.state === 'finished');
  }
  /** The iterations of the runs on screen, else of the chosen environment's size shortened by the link's `size`. */
  iterations(size: Partial<TrainConfig>): number {
    return (
      this.slots[0]?.entry.config.iterations ?? Math.min(size.iterations ?? Infinity, this.choice.size.iterations!)
    );
  }
  /** The chosen environment's three runs (the cards before a group starts). */
  get runs(): StartHereRun[] {
    return startHereRuns(this.choice);
  }

  /** Picks the environment of the next group (not while one trains); its estimate and last timed group with it. */
  choose(env: string): void {
    if (this.active) return;
    this.setChoice(startHereEnv(env));
  }

  /** The link's environment (`#/start?env=E`), if it names one the page offers. */
  chooseFromLink(query: string): void {
    const linked = startHereEnvFromQuery(query);
    if (linked) this.choose(linked.env);
  }

  private setChoice(choice: StartHereEnv): void {
    this.choice = choice;
    this.clock.use(choice.work, lastTimeKey(choice));
  }

  /** Starts the three runs (a new group; an earlier group stays in Compare); `size` shortens them (startHereSizeFromQuery). */
  async start(size: Partial<TrainConfig> = {}): Promise<void> {
    if (this.active) return;
    this.error = null;
    this.starting = true;
    try {
      // One engine rule for Setup, Train and this page (engine.ts dreamEngine): Setup's pick, else the shipped model.
      const setup = engineSetup();
      await setup.ready();
      const choice = this.choice;
      const engine = setup.dream(choice.env);
      this.engine = engine;
      await this.clock.check();
      const entries = groupEntries(startHereConfigs(engine, 1, size, choice), Date.now());
      // The group's work was measured with the shipped model's dream (start-here-estimate.ts): others get no estimate.
      const path = learnedPathOfSpec(engine.llm);
      this.clock.begin(entries[0].config.iterations, path?.where === 'shipped' && path.env === choice.env);
      for (const entry of [...entries].reverse()) upsertRun(entry);
      const runs = startHereRuns(choice);
      this.slots = entries.map((entry, i) => ({
        run: runs[i],
        entry,
        status: statusOf(entry, 'Starting…'),
        history: [],
        live: null,
        waiting: false,
        log: [],
      }));
      // One task each for drawing the three cards and starting each worker: together they made
      // one main-thread task of over 50 ms on a busy 2-core machine.
      for (const entry of entries) {
        await nextTask();
        this.begin(entry, false);
      }
    } catch (error) {
      this.error = (error as Error).message;
    } finally {
      this.starting = false;
    }
  }

  /** The speed check for the first estimate, once the app has loaded (the shipped models checked, the offline shell installed). */
  checkSpeed(): Promise<void> {
    const installed =
      typeof navigator !== 'undefined' && navigator.serviceWorker ? navigator.serviceWorker.ready : null;
    return this.clock.checkWhenSettled(Promise.all([engineSetup().ready(), installed]));
  }

  /** Stops every run still training (their checkpoints and histories stay). */
  async stop(): Promise<void> {
    this.clock.cancel();
    const waiting = this.waitingS2r;
    this.waitingS2r = null;
    if (waiting) this.tell(waiting.entry.runId, 'stopped', 'Stopped while waiting for the dream.');
    const training = this.slots.filter((s) => ['running', 'paused', 'starting'].includes(s.status.state));
    // Said at once: each worker stops before its next rollout step (trainer-host.ts 'stop').
    for (const s of training) this.replace(s.entry.runId, { status: { ...s.status, message: 'Stopping…' } });
    this.stopping = training.length > 0;
    await Promise.all(
      training
        .filter((s) => ['running', 'paused'].includes(s.status.state))
        .map(async (s) => {
          try {
            this.apply(s.entry.runId, await this.clients.get(s.entry.runId)!.stop());
          } catch {
            /* finished meanwhile */
          }
        }),
    );
    this.stopping = false;
  }

  /** After a reload: the newest group with its histories; unfinished runs continue from their checkpoints. */
  private async restore(): Promise<void> {
    const group = latestGroup(loadRuns());
    if (group.length === 0) return;
    this.setChoice(groupEnv(group[0].config.env));
    const runs = this.runs;
    const dreamer = group.find((e) => e.config.mode !== 'real');
    this.engine = dreamer ? dreamEngineOfSpec(dreamer.config.llm) : null;
    const withHistory = await Promise.all(
      group.map(async (entry) => ({ entry, history: await this.history.list(entry.runId).catch(() => []) })),
    );
    this.slots = withHistory.map(({ entry, history }) => ({
      run: runs.find((r) => r.mode === entry.config.mode)!,
      entry,
      history,
      live: null,
      waiting: false,
      log: [],
      status: {
        ...statusOf(entry, entry.message ?? ''),
        iteration: history[history.length - 1]?.iteration ?? entry.iteration,
      },
    }));
    for (const { entry } of withHistory) if (isUnfinished(entry)) this.begin(entry, true);
  }

  /** Launches a run's worker; S2R's follows the dream instead. */
  private begin(entry: RunEntry, resume: boolean): void {
    if (entry.config.mode === 's2r') this.followDream(entry, resume);
    else this.launch(entry, resume);
  }

  /** S2R continues the dream run (s2rNext): it waits for it, then starts from its final checkpoint. */
  private followDream(entry: RunEntry, resume: boolean): void {
    const dream = this.dreamSlot();
    const next = s2rNext(dream?.status.state);
    this.waitingS2r = next === 'wait' ? { entry, resume } : null;
    this.replace(entry.runId, { waiting: next === 'wait' });
    if (next === 'continue') this.launch(entry, resume, dream!.entry.runId);
    else if (next === 'stop') this.tell(entry.runId, 'stopped', s2rStopped(dream?.status.state));
    else {
      this.tell(entry.runId, 'starting', S2R_WAITS);
      this.mirrorDream();
    }
  }

  /** A waiting S2R card shows the dream's curve and counters: its dream phase will be that very dream. */
  private mirrorDream(): void {
    const dream = this.dreamSlot();
    const s2r = this.waitingS2r && this.slot(this.waitingS2r.entry.runId);
    if (!dream || !s2r) return;
    const { iteration, dreamSteps } = dream.status;
    this.replace(s2r.entry.runId, { history: dream.history, status: { ...s2r.status, iteration, dreamSteps } });
  }

  private dreamSlot(): StartHereSlot | undefined {
    return this.slots.find((s) => s.entry.config.mode === 'dream');
  }

  /** Sets a run's state and message from the page (no worker says it). */
  private tell(runId: string, state: TrainerStatus['state'], message: string): void {
    const slot = this.slot(runId);
    if (slot) this.apply(runId, { ...slot.status, state, message });
  }

  private launch(entry: RunEntry, resume: boolean, fromDream?: string): void {
    this.replace(entry.runId, { waiting: false });
    const client = new TrainerClient();
    this.clients.set(entry.runId, client);
    client.oncrash = (error) =>
      this.apply(entry.runId, { ...this.slot(entry.runId)!.status, state: 'error', message: error.message });
    const engine = entry.config.mode === 'real' ? {} : { engine: engineSetup().runtime(entry.config.llm) };
    client
      .start({ runId: entry.runId, config: entry.config, resume, fromDream, ...engine }, (p) =>
        this.onProgress(entry.runId, p),
      )
      .then((final) => this.apply(entry.runId, final))
      .catch((error: Error) => {
        const slot = this.slot(entry.runId);
        if (slot && slot.status.state !== 'error')
          this.apply(entry.runId, { ...slot.status, state: 'error', message: error.message });
      })
      .finally(() => {
        // A finished run's worker is let go (its tfjs memory with it); a new group starts new ones.
        if (this.clients.get(entry.runId) === client) {
          this.clients.delete(entry.runId);
          client.terminate();
        }
      });
  }

  private slot(runId: string): StartHereSlot | undefined {
    return this.slots.find((s) => s.entry.runId === runId);
  }

  private onProgress(runId: string, progress: TrainerProgress): void {
    const slot = this.slot(runId);
    if (!slot) return;
    if (progress.kind === 'live') {
      this.replace(runId, { live: progress.live });
      this.clock.live(slot.entry.config.mode, progress.live.iteration, progress.live.stage);
      return;
    }
    if (progress.kind === 'history') this.replace(runId, { history: progress.records });
    else if (progress.kind === 'metrics') {
      this.replace(runId, { history: appended(slot.history, progress.records), live: null });
      const last = progress.records.at(-1);
      if (last) this.clock.record(slot.entry.config.mode, last.iteration);
    }
    this.apply(runId, progress.status);
    if (slot.entry.config.mode === 'dream') this.mirrorDream();
  }

  private apply(runId: string, status: TrainerStatus): void {
    if (status.runId !== runId) return;
    const log = this.slot(runId)?.log ?? [];
    this.replace(runId, {
      status,
      ...(status.state === 'running' ? {} : { live: null }),
      ...(log.at(-1) === status.message ? {} : { log: [...log, status.message] }),
    });
    if (status.state !== 'idle')
      upsertRun({ runId, state: status.state, iteration: status.iteration, message: status.message });
    this.progress++;
    if (this.finished) this.clock.finish();
    else if (['error', 'stopped'].includes(status.state)) this.clock.cancel();
    // The dream is over: a waiting S2R continues from its checkpoint (or stops, if it ended early).
    const waiting = this.waitingS2r;
    if (waiting && runId === this.dreamSlot()?.entry.runId && !TRAINING.includes(status.state))
      this.followDream(waiting.entry, waiting.resume);
  }

  private replace(runId: string, change: Partial<StartHereSlot>): void {
    this.slots = this.slots.map((s) =>
      s.entry.runId === runId
        ? { ...s, ...change, entry: { ...s.entry, ...(change.status ? { state: change.status.state } : {}) } }
        : s,
    );
  }
}

const KEY = Symbol('start-here-session');
export function provideStartHere(session: StartHereSession): StartHereSession {
  return setContext(KEY, session);
}
export function useStartHere(): StartHereSession {
  return getContext<StartHereSession>(KEY);
}
