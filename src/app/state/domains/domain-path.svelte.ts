/**
 * State of the Domains page's path after the import, for the selected domain: train its
 * experience model in the Experience model worker (progress and the time left measured there,
 * resumable from its epoch checkpoint after a reload), audit it in the Domains worker (OK or
 * FAILED, kept with the model), train the agent by behaviour cloning alone and BC then the dream
 * and compare them, and download the model and the agents. The words are domain-path.ts's.
 */
import { ExpModelClient, ExpModelStoppedError } from '../../workers/expmodel/expmodel-client';
import type { ExpModelProgress, TrainOutcome } from '../../workers/expmodel/expmodel-protocol';
import { DomainWorkerClient, DomainWorkerStoppedError } from '../../workers/domain/domain-client';
import type {
  AgentSettings,
  DomainWorkerProgress,
  StoredDomainAudit,
  Suggestion,
  TrainedAgent,
} from '../../workers/domain/domain-protocol';
import { defaultLearnedStore, type CheckpointSummary, type StoredModelSummary } from '../../storage/learned-store';
import type { ExpModelSettings, ModelSize } from '../model/expmodel-settings';
import { progressLine, progressOf, type TrainProgress } from '../model/expmodel-view';
import { DEFAULT_AGENT_SETTINGS, domainModelName, domainModelSettings, downloadNames, pairsLine } from './domain-path';

export interface DomainPathDeps {
  expmodel: () => ExpModelClient;
  domainWorker: () => DomainWorkerClient;
  store: Pick<
    ReturnType<typeof defaultLearnedStore>,
    'listModels' | 'listCheckpoints' | 'readAudit' | 'readFiles' | 'deleteCheckpoint'
  >;
  save: (name: string, data: BlobPart, type: string) => void;
}

function saveInBrowser(name: string, data: BlobPart, type: string): void {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function pageDeps(): DomainPathDeps {
  return {
    expmodel: () => new ExpModelClient(),
    domainWorker: () => new DomainWorkerClient(),
    store: defaultLearnedStore(),
    save: saveInBrowser,
  };
}

const stopped = (e: unknown) => e instanceof ExpModelStoppedError || e instanceof DomainWorkerStoppedError;
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export type PathTask = 'model' | 'audit' | 'agent' | 'suggest' | null;

export class DomainPathState {
  /** The domain whose path is shown (null: none selected). */
  domain = $state<string | null>(null);
  size = $state<ModelSize>('small');
  epochs = $state(4);
  agentSettings = $state<Omit<AgentSettings, 'agent'>>({ ...DEFAULT_AGENT_SETTINGS });
  /** What runs now. */
  running = $state<PathTask>(null);
  /** What the running task is doing, in words (stages, epochs, iterations). */
  stage = $state<string | null>(null);
  progress = $state.raw<TrainProgress | null>(null);
  backend = $state<string | null>(null);
  model = $state.raw<StoredModelSummary | null>(null);
  /** The model's pairs account, as the CLI prints it (from its training record). */
  pairs = $state<string | null>(null);
  unfinished = $state.raw<CheckpointSummary<ExpModelSettings> | null>(null);
  audit = $state.raw<StoredDomainAudit | null>(null);
  agents = $state.raw<TrainedAgent[]>([]);
  error = $state<string | null>(null);
  /** Which agent suggests, on which held-out episode and step (1-based), and what it suggested. */
  suggestWith = $state<AgentSettings['agent']>('bc');
  suggestEpisode = $state(1);
  suggestStep = $state(1);
  suggestion = $state.raw<Suggestion | null>(null);
  private expmodel: ExpModelClient | null = null;
  private worker: DomainWorkerClient | null = null;

  /** The domain's import inferred every admissible list (its model then retrieves no examples). */
  private inferredLists = false;

  constructor(private readonly deps: DomainPathDeps = pageDeps()) {}

  get modelName(): string | null {
    return this.domain && domainModelName(this.domain);
  }

  /** Shows `domain`'s path: its stored model, unfinished training and kept audit (agents live in this page only). */
  async open(domain: string | null, inferredLists = false): Promise<void> {
    if (domain === this.domain) return;
    this.domain = domain;
    this.inferredLists = inferredLists;
    this.agents = [];
    this.suggestion = null;
    this.error = null;
    this.progress = null;
    this.stage = null;
    await this.readModel();
  }

  /** The stored model of the domain, its unfinished training and the audit kept with it. */
  async readModel(): Promise<void> {
    const name = this.modelName;
    if (!name) return;
    try {
      const [models, checkpoints, audit] = await Promise.all([
        this.deps.store.listModels(),
        this.deps.store.listCheckpoints<ExpModelSettings>(),
        this.deps.store.readAudit<StoredDomainAudit>(name),
      ]);
      if (name !== this.modelName) return; // another domain was selected meanwhile
      this.model = models.find((m) => m.name === name) ?? null;
      this.unfinished = checkpoints.find((c) => c.name === name) ?? null;
      this.audit = audit;
      this.pairs = this.model ? await this.readPairs(name) : null;
    } catch (e) {
      this.error = `Could not read the stored model: ${messageOf(e)}`;
    }
  }

  private async readPairs(name: string): Promise<string | null> {
    const files = await this.deps.store.readFiles(name);
    return files && pairsLine(JSON.parse(files.manifest).training);
  }

  /** Runs one task at a time, its error shown as text; a stop is no error. */
  private async run(task: Exclude<PathTask, null>, action: () => Promise<void>): Promise<void> {
    if (this.running) {
      this.error = `The ${this.running} step is running: stop it or wait for it first.`;
      return;
    }
    this.running = task;
    this.error = null;
    try {
      await action();
    } catch (e) {
      if (stopped(e)) this.stage = 'Stopped.';
      else this.error = messageOf(e);
    } finally {
      this.running = null;
    }
  }

  /** Trains the domain's model (or resumes its unfinished training) in the Experience model worker. */
  async trainModel(resume = false): Promise<void> {
    const domain = this.domain;
    if (!domain) return;
    await this.run('model', async () => {
      const settings = { ...domainModelSettings(domain, this.size, this.inferredLists), epochs: this.epochs };
      this.progress = null;
      this.stage = resume ? 'Resuming the unfinished training…' : 'Starting the training…';
      if (!this.expmodel || this.expmodel.gone) this.expmodel = this.deps.expmodel();
      const outcome = await this.expmodel.train(settings, resume, (p) => this.onModelProgress(p));
      this.stage = this.modelOutcomeLine(outcome);
      await this.readModel();
    });
  }

  private onModelProgress(p: ExpModelProgress): void {
    if (p.kind === 'status') {
      this.stage = p.status.message;
      this.backend = p.status.backend;
    } else if (p.kind === 'batch') this.progress = progressOf(p);
    else if (p.kind === 'checkpoint') this.stage = `Epoch ${p.epochsDone} done and saved: a reload resumes from it.`;
  }

  private modelOutcomeLine(outcome: TrainOutcome): string {
    if (outcome.outcome === 'stopped')
      return `Stopped after ${outcome.epochsDone} finished epochs: Resume continues from the last one.`;
    const t = outcome.training;
    return (
      `Trained learned:local/${outcome.summary.name}: best validation loss ${t.bestValidationLoss.toFixed(3)} at ` +
      `epoch ${t.bestEpoch} of ${t.epochs.length}, ${Math.round(t.seconds)} s.`
    );
  }

  /** The progress bar's line, with the time left measured on this training. */
  get progressText(): string | null {
    return this.progress && progressLine(this.progress, this.backend);
  }

  /** Stops what runs: a model's training keeps its last finished epoch; an audit or agent keeps nothing. */
  async stop(): Promise<void> {
    if (this.running === 'model') await this.expmodel?.stop();
    else if (this.running) this.worker?.stop();
  }

  private client(): DomainWorkerClient {
    if (!this.worker || this.worker.gone) this.worker = this.deps.domainWorker();
    return this.worker;
  }

  private onWorkerProgress = (p: DomainWorkerProgress): void => {
    if (p.kind === 'stage') this.stage = p.text;
    else if (p.kind === 'bc')
      this.stage = `Behaviour cloning: epoch ${p.epoch} of ${p.epochs}, loss ${p.loss.toFixed(3)}`;
    else
      this.stage =
        `Dream: iteration ${p.iteration} of ${p.iterations}, dream-judged success ${p.dreamSuccess.toFixed(2)}, ` +
        `mean length ${p.meanLength.toFixed(1)}`;
  };

  /** Audits the model (core's checks) and keeps the result with it. */
  async auditModel(): Promise<void> {
    const domain = this.domain;
    const model = this.modelName;
    if (!domain || !model) return;
    const { auditTransitions, evalEpisodes, seed } = this.agentSettings;
    await this.run('audit', async () => {
      const options = { domain, model, transitions: auditTransitions, episodes: evalEpisodes, seed };
      this.audit = await this.client().audit(options, this.onWorkerProgress);
      this.stage = `Audited learned:local/${model}: ${this.audit.health.status === 'failed' ? 'FAILED' : 'OK'}.`;
    });
  }

  /** Trains one agent; a second of the same kind replaces the first in the comparison. */
  async trainAgent(agent: AgentSettings['agent']): Promise<void> {
    const domain = this.domain;
    const model = this.modelName;
    if (!domain || !model) return;
    await this.run('agent', async () => {
      const settings = { ...$state.snapshot(this.agentSettings), agent };
      const trained = await this.client().trainAgent({ domain, model, settings }, this.onWorkerProgress);
      this.agents = [...this.agents.filter((a) => a.settings.agent !== agent), trained];
      const returned = trained.agent.returned === 'bc' ? 'BC' : 'dream';
      this.stage = `Trained the agent (${agent}): returned the ${returned} checkpoint.`;
    });
  }

  /** Behaviour cloning alone, then BC then the dream, to compare them. */
  async trainBoth(): Promise<void> {
    await this.trainAgent('bc');
    if (!this.error && this.stage !== 'Stopped.') await this.trainAgent('bc-then-dream');
  }

  /** The chosen agent's action on a recorded held-out step, beside the recorded one. */
  async suggest(): Promise<void> {
    const domain = this.domain;
    const agent = this.agents.find((a) => a.settings.agent === this.suggestWith);
    if (!domain || !agent) {
      this.error = 'Train that agent first.';
      return;
    }
    await this.run('suggest', async () => {
      const request = { domain, agent, episode: this.suggestEpisode, step: this.suggestStep };
      this.suggestion = await this.client().suggest(request);
    });
  }

  /** Saves the model's two files (the CLI's model.json and weights.bin). */
  async downloadModel(): Promise<void> {
    const domain = this.domain;
    const name = this.modelName;
    if (!domain || !name) return;
    const files = await this.deps.store.readFiles(name);
    if (!files) {
      this.error = `No model of '${domain}' is stored: train it first.`;
      return;
    }
    const names = downloadNames(domain);
    this.deps.save(names.modelManifest, files.manifest, 'application/json');
    this.deps.save(names.modelWeights, files.weights as BlobPart, 'application/octet-stream');
  }

  /** Saves an agent's checkpoint: its manifest (the CLI's checkpoint/manifest.json) and the weights it names. */
  downloadAgent(agent: TrainedAgent): void {
    const manifest = JSON.parse(agent.checkpoint.manifest) as { weights: { file: string } };
    const names = downloadNames(agent.domain, agent.settings.agent);
    this.deps.save(names.agentManifest, agent.checkpoint.manifest, 'application/json');
    this.deps.save(manifest.weights.file, agent.checkpoint.weights as BlobPart, 'application/octet-stream');
  }

  async discardUnfinished(): Promise<void> {
    if (!this.modelName) return;
    await this.deps.store.deleteCheckpoint(this.modelName);
    await this.readModel();
  }

  close(): void {
    void this.stop();
  }
}
