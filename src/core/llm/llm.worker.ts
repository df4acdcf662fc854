/**
 * The WebLLM worker (docs/architecture.md §9.2: thin): web-llm's own WebWorkerMLCEngineHandler owns the
 * MLCEngine and speaks web-llm's worker protocol with the page's WebWorkerMLCEngine
 * (src/core/llm/webllm.ts). Created by createLlmWorker(). web-llm comes through importWebLlm(),
 * so the built app holds one copy of it (src/build/web-llm-once.ts); messages that arrive while
 * it loads wait for the handler, in order.
 */
import { importWebLlm } from './webllm';

const waiting: MessageEvent[] = [];
let handle: ((event: MessageEvent) => void) | undefined;
self.onmessage = (event: MessageEvent) => (handle ? handle(event) : waiting.push(event));
importWebLlm().then(
  ({ WebWorkerMLCEngineHandler }) => {
    const handler = new WebWorkerMLCEngineHandler();
    handle = (event) => handler.onmessage(event);
    for (const event of waiting.splice(0)) handle(event);
  },
  (error: unknown) => {
    setTimeout(() => {
      throw error;
    });
  }, // the page sees the worker's error event
);
