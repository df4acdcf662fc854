/**
 * The teach worker (docs/architecture.md §9.2: thin). The step-through updates of the Teach page run here so
 * the page's main thread stays free; the protocol is in teach-protocol.ts, the
 * body in teach-host.ts, and the page talks to it through TeachClient (teach-client.ts).
 */
import { TeachHost } from './teach-host';
import type { TeachRequest } from './teach-protocol';

const host = new TeachHost((reply) => self.postMessage(reply));
self.onmessage = (event: MessageEvent<TeachRequest>) => {
  void host.handle(event.data);
};
