/**
 * The offline copy of the built app: registers the generated service worker (production builds
 * only; main.ts decides) and follows its life cycle so the header can say "Ready offline".
 */
import { offlineMessage, offlineState, type OfflineState, type RegistrationView } from './offline';

export class OfflineStatus {
  state = $state<OfflineState>('dev');
  error = $state('');
  online = $state(typeof navigator === 'undefined' ? true : navigator.onLine);
  message = $derived(offlineMessage(this.state, this.online, this.error));

  constructor() {
    if (typeof window === 'undefined') return;
    window.addEventListener('online', () => {
      this.online = true;
    });
    window.addEventListener('offline', () => {
      this.online = false;
    });
  }

  /** Registers the service worker at `url` (scope: its folder). */
  async register(url: string): Promise<void> {
    if (!('serviceWorker' in navigator)) {
      this.state = 'unsupported';
      return;
    }
    this.state = 'checking';
    try {
      const registration = await navigator.serviceWorker.register(url);
      // A page that was already served by an older build is told to reload when a new one takes over.
      let replaced = false;
      const previous = navigator.serviceWorker.controller;
      const update = () => this.follow(registration, replaced);
      registration.addEventListener('updatefound', () => {
        registration.installing?.addEventListener('statechange', update);
        update();
      });
      for (const worker of [registration.installing, registration.waiting, registration.active])
        worker?.addEventListener('statechange', update);
      navigator.serviceWorker.addEventListener('controllerchange', () => {
        if (previous !== null) replaced = true;
        update();
      });
      update();
    } catch (error) {
      this.error = error instanceof Error ? error.message : String(error);
      this.state = 'error';
    }
  }

  private follow(registration: ServiceWorkerRegistration, replaced: boolean): void {
    const view: RegistrationView = {
      installing: registration.installing?.state ?? 'none',
      waiting: registration.waiting?.state ?? 'none',
      active: registration.active?.state ?? 'none',
      controlled: navigator.serviceWorker.controller !== null,
      replaced,
    };
    // An install that fails (a shell file could not be fetched) leaves a redundant worker and no copy.
    if (view.installing === 'redundant' && view.active === 'none') {
      this.error = 'a file of the app could not be saved';
      this.state = 'error';
      return;
    }
    if (view.installing === 'redundant') view.installing = 'none';
    this.state = offlineState(view);
  }
}
