// What every page test needs: the built app served on loopback and a system Chromium.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './browser.mjs';
import { serve } from './serve.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const artifacts = path.join(root, 'e2e', 'artifacts');
const dist = path.join(root, 'dist');

/// Starts the server and the browser before the file's tests, and stops them after.
export function harness() {
  const h = { base: '', browser: null };
  let server;
  before(async () => {
    assert.ok(fs.existsSync(path.join(dist, 'index.html')), 'dist/ is missing: run trunk build --release first');
    fs.mkdirSync(artifacts, { recursive: true });
    server = await serve(dist);
    h.base = `http://127.0.0.1:${server.address().port}/`;
    h.browser = await launch();
  });
  after(async () => {
    await h.browser?.close();
    server?.close();
  });
  return h;
}

/// The runs are in a Web Worker: a control's command shows when the worker answers (a frame or
/// two). Waits until the page has every answer (`.app[data-runs-waiting]`).
export const answered = (page) => page.waitForFunction(() => document.querySelector('.app')?.dataset.runsWaiting !== 'true', null, { timeout: 10000 });

/// Opens `fragment` of the served app in a new page of `context` at `size`, collecting the
/// page's console errors and uncaught exceptions (each test asserts there were none).
export async function openPage(h, context, fragment, size = { width: 1400, height: 900 }, init = null) {
  const page = await context.newPage();
  await page.setViewportSize(size);
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  if (init) await page.addInitScript(init);
  await page.goto(h.base + fragment);
  return { page, errors };
}

/// Every lesson with steps (the three primers and the six regressions).
export const LESSONS = ['anatomy-of-a-request', 'queue-depth-and-the-elevator', 'writer-starves-reader', 'dm-sg-lists', 'raid5-chunk', 'mq-clone-stall', 'nr-requests', 'scsi-starved', 'bfq-many-hw-queues'];

/// The offline tests' start: the built app on its own server (the test stops it) and a browser,
/// a page that has visited the home page once and whose service worker is active. `cached`
/// runs in the page and says when the worker's install has cached what the test needs.
export async function visitOnce(viewport, cached) {
  const server = await serve(dist);
  const base = `http://127.0.0.1:${server.address().port}/`;
  const browser = await launch();
  try {
    const ctx = await browser.newContext({ viewport });
    const page = await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(base + '#/');
    await page.waitForSelector('.lesson-list');
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    await page.waitForFunction(cached, null, { timeout: 15000 });
    return { server, base, browser, ctx, page, errors };
  } catch (e) {
    await browser.close();
    server.close();
    throw e;
  }
}

/// Stops the server and checks that it is gone (a file no cache holds cannot be fetched), so
/// whatever loads afterwards comes from the service worker's cache.
export async function goOffline(page, server) {
  server.close();
  server.closeAllConnections?.();
  const probe = await page.evaluate(() => fetch('./not-cached.txt').then(() => 'fetched', () => 'failed'));
  assert.equal(probe, 'failed', 'the server still answers');
}
