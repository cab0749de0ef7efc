// The trace page works offline too: its reader (a wasm of its own, which the lesson pages never
// load) is among the files the service worker fetches at install, so after one visit to any
// page a trace opens with the server gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { root, visitOnce, goOffline } from './harness.mjs';

test('after one visit to the home page the trace page reads a trace with the server stopped', async () => {
  // The install has cached the trace reader's files (the home page never asked for them).
  const { server, base, browser, page, errors } = await visitOnce({ width: 1300, height: 1100 }, async () => {
    const keys = (await (await caches.open('blkviz-v1')).keys()).map((r) => new URL(r.url).pathname);
    return ['/trace-worker.js', '/trace_worker.js', '/trace_worker_bg.wasm'].every((f) => keys.includes(f));
  });
  try {
    await goOffline(page, server);
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
