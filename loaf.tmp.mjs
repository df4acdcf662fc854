import { chromium } from 'playwright';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--enable-unsafe-webgpu'] });
const ctx = await b.newContext({ viewport: { width: 1280, height: 720 } });
await ctx.addInitScript(() => {
  window.__loaf = []; window.__lt = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__lt.push([Math.round(e.startTime), Math.round(e.duration)]); }).observe({ type: 'longtask', buffered: true });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.duration > 45) window.__loaf.push({ t: Math.round(e.startTime), d: Math.round(e.duration), block: Math.round(e.blockingDuration), render: Math.round(e.renderStart ? e.startTime + e.duration - e.renderStart : 0), style: Math.round(e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0), scripts: e.scripts.map((s) => `${s.invoker} ${s.sourceFunctionName}@${(s.sourceURL||'').split('/').pop()}:${s.sourceCharPosition} ${Math.round(s.duration)}ms fsl=${Math.round(s.forcedStyleAndLayoutDuration)}`) }); }).observe({ type: 'long-animation-frame', buffered: true });
});
const p = await ctx.newPage();
await p.goto('http://127.0.0.1:4173/#/start?iterations=3');
await p.waitForTimeout(3000);
await p.evaluate(() => { window.__loaf = []; window.__lt = []; });
await p.getByTestId('start-three').click();
await p.waitForTimeout(25000);
console.log(JSON.stringify(await p.evaluate(() => ({ lt: window.__lt, loaf: window.__loaf })), null, 1));
await b.close();
