// The text the page fetches as files (content/: each lesson's text, the sandbox's, the
// scoreboard whole and per lesson): it arrives after the page is up, the page shows it then, and
// a file that does not arrive leaves one clear line where it goes, not a blank page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { harness, root, openPage } from './harness.mjs';

const h = harness();

test('every file the build lists is served, and a lesson, the sandbox and the Fidelity page show theirs', async () => {
  const index = JSON.parse(fs.readFileSync(path.join(root, 'dist', 'content', 'index.json'), 'utf8'));
  const lessons = fs.readdirSync(path.join(root, 'lessons')).filter((f) => f.endsWith('.md'));
  assert.equal(index.files.filter((f) => /^content\/lesson-.*\.json$/.test(f)).length, lessons.length, 'one text file per lesson');
  for (const f of index.files) assert.ok(fs.existsSync(path.join(root, 'dist', f)), `${f} is listed but not in dist/`);
  const ctx = await h.browser.newContext();
  const { page, errors } = await openPage(h, ctx, '#/lesson/nr-requests?v=1');
  await page.click('[data-testid=text-gate] .gate-show');
  // Its text, and in its Status section the table of its own rows, fetched on their own.
  await page.waitForSelector('.lesson-text [data-testid=fidelity-table]');
  assert.equal(await page.locator('.lesson-text h1').count(), 1);
  const rows = JSON.parse(fs.readFileSync(path.join(root, 'lessons', 'fidelity.json'), 'utf8')).lessons.find((l) => l.lesson === 'nr-requests').rows;
  assert.equal(await page.locator('.lesson-text [data-testid=fidelity-table] tbody tr.row-holds, .lesson-text [data-testid=fidelity-table] tbody tr.row-misses').count(), rows.length);
  // A step's text comes from the same file.
  await page.keyboard.press('PageDown');
  await page.waitForFunction(() => (document.querySelector('[data-testid=step-panel] .step-text')?.textContent ?? '').length > 40);
  // The sandbox's text (docs/model.md).
  await page.goto(h.base + '#/sandbox?v=1');
  await page.waitForFunction(() => (document.querySelector('.lesson-text')?.textContent ?? '').length > 1000);
  assert.equal(await page.locator('.lesson-text h1').count(), 1);
  // The Fidelity page: every lesson's table and the devices' section.
  await page.goto(h.base + '#/fidelity');
  await page.waitForSelector('[data-testid=fidelity-devices]');
  assert.ok((await page.locator('.fidelity-page [data-testid=fidelity-table]').count()) >= 2);
  assert.equal(await page.locator('.fetch-loading, [data-testid=fetch-failed]').count(), 0);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a text file that does not arrive leaves one line saying so, and the lesson still runs', async () => {
  const ctx = await h.browser.newContext();
  await ctx.route(/\/content\/(lesson-|fidelity|sandbox)/, (route) => route.fulfill({ status: 404, body: 'not found' }));
  const { page, errors } = await openPage(h, ctx, '#/lesson/anatomy-of-a-request?v=1');
  await page.waitForSelector('[data-testid=fetch-failed]');
  assert.equal(await page.locator('[data-testid=fetch-failed]').count(), 1);
  assert.match(await page.textContent('[data-testid=fetch-failed]'), /^The lesson text did not load \(content\/lesson-anatomy-of-a-request\.json: HTTP 404\)\. Reload the page to try again\.$/);
  // The run goes on.
  const e0 = Number(await page.getAttribute('[data-testid=live]', 'data-events'));
  await page.waitForFunction((e) => Number(document.querySelector('[data-testid=live]').dataset.events) > e, e0, { timeout: 15000 });
  await page.goto(h.base + '#/fidelity');
  await page.waitForSelector('[data-testid=fetch-failed]');
  assert.match(await page.textContent('[data-testid=fetch-failed]'), /^The scoreboard did not load \(content\/fidelity\.json: HTTP 404\)/);
  // The browser logs the failed requests (404) as console errors; no script error besides.
  assert.deepEqual(errors.filter((e) => !/Failed to load resource/.test(e)), []);
  await ctx.close();
});
