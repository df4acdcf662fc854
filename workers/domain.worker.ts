/**
 * The Domains worker (docs/architecture.md §9.2: thin): a domain's model audit and its agent's
 * training run here, off the page's main thread. Protocol: src/app/workers/domain-protocol.ts;
 * body: domain-host.ts; the page talks to it through DomainWorkerClient (domain-client.ts).
 */
import { DomainHost, browserDomainHostDeps } from '../src/app/workers/domain-host';
import type { DomainWorkerRequest } from '../src/app/workers/domain-protocol';

const host = new DomainHost((reply) => self.postMessage(reply), browserDomainHostDeps());
self.onmessage = (event: MessageEvent<DomainWorkerRequest>) => {
  void host.handle(event.data);
};
