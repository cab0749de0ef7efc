// The sandbox's job-file box works offline too: its reader (a wasm of its own, which the page
// loads only when a job file is applied) is among the files the service worker fetches at
// install, so after one visit to any page a job file applies with the server gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { visitOnce, goOffline } from './harness.mjs';

test('after one visit to the home page the sandbox applies a job file with the server stopped', async () => {
  // The install has cached the job-file reader's files (the home page never asked for them).
  const { server, base, browser, page, errors } = await visitOnce({ width: 1300, height: 1100 }, async () => {
    const keys = (await (await caches.open('blkviz-v1')).keys()).map((r) => new URL(r.url).pathname);
    return ['/job-worker.js', '/job_worker.js', '/job_worker_bg.wasm'].every((f) => keys.includes(f));
  });
  try {
    await goOffline(page, server);
    await page.goto(base + '#/sandbox?v=1');
    await page.reload();
    await page.waitForSelector('textarea', { timeout: 15000 });
    await page.fill('textarea', '[a]\nrw=randwrite\nbs=8k\n');
    await page.click('[data-testid=apply-fio]');
    await page.waitForSelector('.sandbox .knob-msg', { timeout: 15000 });
    assert.match(await page.textContent('.sandbox .knob-msg'), /applied the job \(3 settings from the file/);
    // A file the reader refuses says why, and applies nothing.
    await page.fill('textarea', 'rw=read\n');
    await page.click('[data-testid=apply-fio]');
    await page.waitForFunction(() => document.querySelector('.sandbox .knob-msg').textContent.startsWith('not applied'), null, { timeout: 15000 });
    assert.match(await page.textContent('.sandbox .knob-msg'), /^not applied: fio: no job section; expected a \[name\] section/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
  }
});
