/**
 * The Domains worker (docs/architecture.md §9.2: thin): a domain's model audit and its agent's
 * training run here, off the page's main thread. Protocol: domain-protocol.ts;
 * body: domain-host.ts; the page talks to it through DomainWorkerClient (domain-client.ts).
 */
import { DomainHost, browserDomainHostDeps } from './domain-host';
import type { DomainWorkerRequest } from './domain-protocol';

const host = new DomainHost((reply) => self.postMessage(reply), browserDomainHostDeps());
self.onmessage = (event: MessageEvent<DomainWorkerRequest>) => {
  void host.handle(event.data);
};
