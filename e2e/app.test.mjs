// Whole-page tests of the built app (dist/), as a student or an instructor would use it.
// Run by scripts/test after `trunk build --release`; or `npm run e2e` with dist/ present.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './browser.mjs';
import { serve } from './serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const artifacts = path.join(root, 'e2e', 'artifacts');
let server, browser, base;

before(async () => {
  assert.ok(fs.existsSync(path.join(dist, 'index.html')), 'dist/ is missing: run trunk build --release first');
  fs.mkdirSync(artifacts, { recursive: true });
  server = await serve(dist);
  base = `http://127.0.0.1:${server.address().port}/`;
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.close();
});

// Opens a page and records console errors and uncaught exceptions.
async function open(fragment, viewport = { width: 1400, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(base + fragment);
  await page.waitForSelector('canvas.diagram');
  return { page, errors };
}

const events = async (page) => Number(await page.getAttribute('[data-testid=live]', 'data-events'));

test('the page loads with no console errors and draws the diagram', async () => {
  const { page, errors } = await open('#/lesson/anatomy-of-a-request?v=1&speed=0.02');
  await page.waitForTimeout(1500);
  // The canvas has been drawn on: its pixels are not all one colour.
  const distinct = await page.$eval('canvas.diagram', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 4 * 97) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return seen.size;
  });
  assert.ok(distinct > 5, `canvas looks blank (${distinct} colours)`);
  assert.match(await page.getAttribute('canvas.diagram', 'aria-label'), /1 device/);
  await page.screenshot({ path: path.join(artifacts, 'anatomy-of-a-request.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the counters change while it plays', async () => {
  const { page, errors } = await open('#/lesson/scsi-starved?v=1&speed=1');
  const e0 = await events(page);
  await page.waitForSelector('[data-counter=throughput]');
  const first = await page.textContent('.counters');
  await page.waitForFunction((f) => document.querySelector('.counters').textContent !== f, first, { timeout: 15000 });
  const e1 = await events(page);
  assert.ok(e1 > e0, `event count did not grow: ${e0} -> ${e1}`);
  // iostat lists every device of the scenario, with a number in w/s.
  assert.equal(await page.locator('table.iostat tbody tr').count(), 12);
  assert.match(await page.textContent('[data-counter=throughput]'), /[0-9.]+ (MB|GB)\/s/);
  await page.screenshot({ path: path.join(artifacts, 'scsi-starved.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('Space pauses and resumes, and → steps exactly one event', async () => {
  const { page, errors } = await open('#/lesson/anatomy-of-a-request?v=1&speed=0.01');
  await page.waitForTimeout(500);
  assert.equal(await page.getAttribute('.app', 'data-playing'), 'true');
  await page.keyboard.press('Space');
  assert.equal(await page.getAttribute('.app', 'data-playing'), 'false');
  await page.waitForTimeout(200);
  const paused = await events(page);
  await page.waitForTimeout(600);
  assert.equal(await events(page), paused, 'events ran while paused');
  await page.keyboard.press('ArrowRight');
  await page.waitForTimeout(100);
  assert.equal(await events(page), paused + 1, '→ should run exactly one event');
  await page.keyboard.press('Space');
  assert.equal(await page.getAttribute('.app', 'data-playing'), 'true');
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=live]').dataset.events) > n + 1, paused, { timeout: 10000 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a variant toggle restarts the run with that variant', async () => {
  const { page, errors } = await open('#/lesson/anatomy-of-a-request?v=1&speed=0.01');
  await page.click('button.variant:has-text("large-pool")');
  assert.equal(await page.getAttribute('button.variant:has-text("large-pool")', 'aria-pressed'), 'true');
  assert.equal(await page.getAttribute('button.variant:has-text("small-pool")', 'aria-pressed'), 'false');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad link shows a message naming the problem, and never injects markup', async () => {
  const { page, errors } = await open('#/lesson/scsi-starved?v=1&workload.rw=%3Cscript%3Ewindow.pwned=1%3C/script%3E');
  const notice = await page.textContent('.notice');
  assert.match(notice, /workload\.rw/);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.equal(await page.locator('.notice script').count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});
