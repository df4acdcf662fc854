// Measures OpenAiChatModel's peak memory refusing a 400 MB answer body — figures: none in docs/results (prints them).
/**
 * Measurement (issue 13): a loopback OpenAI-compatible server answers a chat completion with a
 * 400 MB body — once streamed (chunked, no length), once with its Content-Length declared — and
 * OpenAiChatModel must refuse both with peak memory (max RSS of this process, server included)
 * under 300 MB.
 *
 *   node --import tsx scripts/measure/body-cap-measure.ts [--mb 400]
 *
 * Prints one line per case and a JSON summary last; exits 1 when a body is accepted or the peak
 * passes 300 MB. Not a CI test (it pushes hundreds of megabytes through a socket).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAiChatModel } from '../../src/core/llm/openai';
import { LlmError } from '../../src/core/llm/types';

const mbAt = process.argv.indexOf('--mb');
const megabytes = mbAt >= 0 ? Number(process.argv[mbAt + 1]) : 400;
const CHUNK = Buffer.alloc(1 << 20, 0x78); // 1 MiB of 'x', reused: the server holds no body

/** Writes `{"choices":[{"message":{"content":"xxxx…"}}]}` of about `mb` MiB, minding backpressure. */
function streamBody(res: ServerResponse, mb: number, declare: boolean): void {
  const head = Buffer.from('{"choices":[{"message":{"role":"assistant","content":"');
  const tail = Buffer.from('"},"finish_reason":"stop"}]}');
  res.writeHead(200, {
    'content-type': 'application/json',
    ...(declare ? { 'content-length': String(head.length + mb * CHUNK.length + tail.length) } : {}),
  });
  res.write(head);
  let sent = 0;
  const pump = () => {
    while (sent < mb) {
      sent++;
      if (!res.write(CHUNK)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end(tail);
  };
  res.on('close', () => {
    sent = mb + 1;
  }); // the client hung up: stop
  pump();
}

async function main(): Promise<number> {
  let declare = false;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => streamBody(res, megabytes, declare));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const model = new OpenAiChatModel({ baseUrl, model: 'big', retries: 0, timeoutMs: 120_000 });
  const cases = [];
  for (const declared of [false, true]) {
    declare = declared;
    const started = performance.now();
    const outcome = await model.complete({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 8 }).then(
      () => 'ACCEPTED',
      (error: unknown) =>
        error instanceof LlmError
          ? `refused (${error.code}): ${error.message.slice(0, 120)}…`
          : `failed: ${String(error)}`,
    );
    const peakMb = process.resourceUsage().maxRSS / 1024;
    console.log(
      `${megabytes} MB body, ${declared ? 'Content-Length declared' : 'streamed (chunked)'}: ${outcome} after ${(performance.now() - started).toFixed(0)} ms; peak RSS so far ${peakMb.toFixed(0)} MB`,
    );
    cases.push({ declared, refused: outcome.startsWith('refused'), peakMb: Math.round(peakMb) });
  }
  server.close();
  const peakMb = Math.round(process.resourceUsage().maxRSS / 1024);
  console.log(JSON.stringify({ megabytes, capBytes: model.maxResponseBytes, peakMb, cases }));
  return cases.every((c) => c.refused) && peakMb < 300 ? 0 : 1;
}

process.exitCode = await main();
