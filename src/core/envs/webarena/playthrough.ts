/**
 * One episode of a webarena-lite-v0 task: the live sites, the browser, and WebArena's reward. An
 * answer task ends at `stop` and is judged on the answer; a navigation or change task is judged on
 * the state, so it ends with reward 1 on the step its URL or state check first holds (WebArena
 * would judge that state when the agent stops), and a `stop` before then ends it with 0.
 */
import { Browser, candidateTexts, type Command } from './browser';
import { evaluate, judgedByState, type Evaluator } from './evaluators';
import { expertCommand, type Target } from './expert';
import type { Route } from './pages';
import type { Sites } from './world';

/** What an episode reads of its task (tasks.ts WebArenaTaskSpec; named here so tasks.ts may import this file). */
export interface PlaythroughSpec {
  start: Route;
  viewport: number;
  evaluator: Evaluator;
  target: Target;
}

export class Playthrough {
  readonly browser: Browser;
  ended = false;
  succeeded = false;
  answer: string | null = null;

  constructor(
    readonly spec: PlaythroughSpec,
    instruction: string,
    readonly sites: Sites,
  ) {
    this.browser = new Browser(sites, spec.start, spec.viewport, candidateTexts(instruction));
  }

  /** Runs a parsed command; true when the task is accomplished by it. */
  run(command: Command): boolean {
    this.browser.execute(command);
    if (command.verb === 'stop') {
      this.answer = command.answer;
      this.ended = true;
      this.succeeded = this.judge();
    } else if (judgedByState(this.spec.evaluator) && this.judge()) {
      this.ended = true;
      this.succeeded = true;
    }
    return this.succeeded;
  }

  judge(): boolean {
    return evaluate(this.spec.evaluator, { answer: this.answer, url: this.browser.url, sites: this.sites });
  }

  expertCommand(): Command | null {
    return this.ended ? null : expertCommand(this.browser, this.spec.target);
  }
}
