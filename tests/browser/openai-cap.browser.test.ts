/**
 * The response-body cap holds in Chromium, inside a worker as the page's trainer runs it: a
 * 200 MB answer streamed without a Content-Length is refused at the 1 MiB cap, never buffered.
 */
import { describe, expect, it } from 'vitest';

describe('OpenAiChatModel in a Chromium worker', () => {
  it('refuses a body over maxResponseBytes as a transient bad-response (one invalid transition, not the run)', async () => {
    const worker = new Worker(new URL('./fixtures/openai-cap.worker.ts', import.meta.url), { type: 'module' });
    try {
      const reply = await new Promise<Record<string, unknown>>((resolve, reject) => {
        worker.onmessage = (event) => resolve(event.data);
        worker.onerror = (event) => reject(new Error(event.message));
        worker.postMessage({ bytes: 200 << 20 });
      });
      expect(reply).toMatchObject({ accepted: false, code: 'bad-response', transient: true });
      expect(reply.message).toMatch(
        /sent more than 1048576 bytes, over the cap of 1048576 bytes \(maxResponseBytes\); it was refused unread/,
      );
    } finally {
      worker.terminate();
    }
  });
});
