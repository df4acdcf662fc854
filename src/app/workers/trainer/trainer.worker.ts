/**
 * The trainer worker (docs/architecture.md §9.2: thin). Training runs here so the page's main thread stays
 * free; the protocol is in trainer-protocol.ts, the body in trainer-host.ts, and the
 * page talks to it through TrainerClient (trainer-client.ts).
 */
import { TrainerHost } from './trainer-host';
import type { TrainerRequest } from './trainer-protocol';

const host = new TrainerHost((reply) => self.postMessage(reply));
self.onmessage = (event: MessageEvent<TrainerRequest>) => {
  void host.handle(event.data);
};
