/**
 * The WebLLM worker (design.md §2: thin): web-llm's own WebWorkerMLCEngineHandler owns the
 * MLCEngine and speaks web-llm's worker protocol with the page's WebWorkerMLCEngine
 * (src/core/llm/webllm.ts). Created by createLlmWorker().
 */
import { WebWorkerMLCEngineHandler } from '@mlc-ai/web-llm';

const handler = new WebWorkerMLCEngineHandler();
self.onmessage = (event: MessageEvent) => handler.onmessage(event);
