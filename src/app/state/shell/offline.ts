/**
 * What the header says about the offline copy (the service worker of the built app), derived
 * from the registration's workers. Plain logic, unit-tested in Node.
 */
export type OfflineState =
  'dev' | 'unsupported' | 'checking' | 'installing' | 'updating' | 'ready' | 'reload' | 'error';

type WorkerState = ServiceWorkerState | 'none';

export interface RegistrationView {
  installing: WorkerState;
  waiting: WorkerState;
  active: WorkerState;
  /** Whether this page is served by a service worker (a reload after the first visit is). */
  controlled: boolean;
  /** A newer build took over while this page was open (its own chunks may be gone from the server). */
  replaced?: boolean;
}

export function offlineState(view: RegistrationView): OfflineState {
  const pending = view.installing !== 'none' || view.waiting !== 'none';
  const hasCopy = view.active === 'activated';
  if (pending) return hasCopy || view.controlled ? 'updating' : 'installing';
  if (hasCopy) return view.replaced ? 'reload' : 'ready';
  if (view.active === 'activating') return view.controlled ? 'updating' : 'installing';
  return 'checking';
}

export function offlineMessage(state: OfflineState, online: boolean, error = ''): string {
  const text = {
    // The dev server has no offline copy by design: nothing to say in the header (README: npm run build).
    dev: '',
    unsupported: 'This browser has no service workers: the app needs the network to load',
    checking: 'Checking the offline copy…',
    installing: 'Saving an offline copy…',
    updating: 'Offline copy updating…',
    ready: 'Ready offline',
    reload: 'A new version is saved offline: reload the page to use it',
    error: `Offline copy failed: ${error || 'unknown error'}. The app still works online; reload to retry`,
  }[state];
  return online ? text : text ? `${text} · network off` : 'Network off';
}
