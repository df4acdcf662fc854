/**
 * The Experience model worker (docs/architecture.md §9.2: thin). Training and auditing the learned experience
 * model run here so the page's main thread stays free; the protocol is in
 * expmodel-protocol.ts, the body in expmodel-host.ts, and the page talks to it
 * through ExpModelClient (expmodel-client.ts).
 */
import { ExpModelHost, browserHostDeps } from './expmodel-host';
import type { ExpModelRequest } from './expmodel-protocol';

const host = new ExpModelHost((reply) => self.postMessage(reply), browserHostDeps());
self.onmessage = (event: MessageEvent<ExpModelRequest>) => {
  void host.handle(event.data);
};
