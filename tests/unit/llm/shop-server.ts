/**
 * The OpenAI test server playing the scripted shop world (tests/unit/experience/fixtures.ts): each
 * answer is a function of the prompt alone, so runs against it are reproducible whatever the order
 * or concurrency of the requests.
 */
import type { ChatRequest } from '../../../src/core/llm/types';
import { scriptedShop } from '../experience/fixtures';
import { chatCompletion, type OpenAiTestServer, type RecordedRequest, type ScriptedReply } from './openai-test-server';

/** Token counts the replies report (the default: chatCompletion's). */
export interface ReplyUsage {
  promptTokens?: number;
  completionTokens?: number;
}

/** The scripted shop's text for a recorded chat request. */
export function shopText(request: RecordedRequest): string {
  return scriptedShop({ messages: request.body.messages, maxTokens: 1 } as ChatRequest);
}

/** The scripted shop's answer to a recorded chat request. */
export function shopReply(request: RecordedRequest, usage: ReplyUsage = {}): ScriptedReply {
  return { body: chatCompletion(shopText(request), usage) };
}

/** Every chat request answered by the scripted shop, after `delayMs`. */
export function shopAfter(server: OpenAiTestServer, delayMs: number, usage: ReplyUsage = {}): void {
  server.answerEveryChat((request) => ({ delayMs, ...shopReply(request, usage) }));
}
