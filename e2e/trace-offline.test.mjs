// The trace page works offline too: its reader (a wasm of its own, which the lesson pages never
// load) is among the files the service worker fetches at install, so after one visit to any
// page a trace opens with the server gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { launch } from './browser.mjs';
import { serve } from './serve.mjs';
import { root } from './harness.mjs';

test('after one visit to the home page the trace page reads a trace with the server stopped', async () => {
  const server = await serve(path.join(root, 'dist'));
  const base = `http://127.0.0.1:${server.address().port}/`;
  const browser = await launch();
  try {
    const ctx = await browser.newContext({ viewport: { width: 1300, height: 1100 } });
    const page = await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(base + '#/');
    await page.waitForSelector('.lesson-list');
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    // The install has cached the trace reader's files (the home page never asked for them).
    await page.waitForFunction(async () => {
      const keys = (await (await caches.open('blkviz-v1')).keys()).map((r) => new URL(r.url).pathname);
      return ['/trace-worker.js', '/trace_worker.js', '/trace_worker_bg.wasm'].every((f) => keys.includes(f));
    }, null, { timeout: 15000 });
    server.close();
    server.closeAllConnections?.();
    const probe = await page.evaluate(() => fetch('./not-cached.txt').then(() => 'fetched', () => 'failed'));
    assert.equal(probe, 'failed', 'the server still answers');
    await page.goto(base + '#/trace');
    await page.reload();
    await page.waitForSelector('[data-testid=trace-files]', { timeout: 15000 });
    await page.setInputFiles('[data-testid=trace-files]', [path.join(root, 'e2e', 'fixtures', 'sda.blktrace.0'), path.join(root, 'e2e', 'fixtures', 'sda.blktrace.1')]);
    await page.waitForSelector('[data-testid=trace-summary]', { timeout: 15000 });
    assert.match(await page.textContent('[data-testid=trace-summary]'), /^2104 records from sda\.blktrace\.0, sda\.blktrace\.1/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
  }
});
