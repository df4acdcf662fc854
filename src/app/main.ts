// First, so that a component's own <style> comes after the shared classes and wins a tie.
import './app.css';
import { mount } from 'svelte';
import App from './App.svelte';
import { OfflineStatus } from './state/shell/offline.svelte';

const offline = new OfflineStatus();
// The service worker exists only in the built app (src/sw/plugin.ts); in the dev server it would
// serve stale modules and break hot reload.
if (import.meta.env.PROD) void offline.register(`${import.meta.env.BASE_URL}sw.js`);

mount(App, { target: document.getElementById('app')!, props: { offline } });
