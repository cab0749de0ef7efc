// Works offline: after one visit the service worker has the app's files, so with the server
// gone a reload (and a lesson link) still opens and runs. As an instructor would find it in a
// lecture hall with no Wi-Fi.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root, artifacts, visitOnce, goOffline } from './harness.mjs';

test('after one visit the page and its lesson links open with the server stopped', async () => {
  // Wait until the worker is active and has every app file.
  const { server, base, browser, ctx, page, errors } = await visitOnce({ width: 1400, height: 900 }, async () => {
    const c = await caches.open('blkviz-v1');
    return (await c.keys()).length >= 10;
  });
  try {
    // The manifest is linked and served as one.
    const manifest = await page.evaluate(async () => {
      const href = document.querySelector('link[rel=manifest]').href;
      const r = await fetch(href);
      return { type: r.headers.get('content-type'), json: await r.json() };
    });
    assert.match(manifest.type, /manifest\+json/);
    assert.equal(manifest.json.short_name, 'blkviz');
    assert.ok(manifest.json.icons.some((i) => i.sizes === '512x512' && i.type === 'image/png'));
    // Chromium finds nothing that keeps it from installing the app.
    const cdp = await ctx.newCDPSession(page);
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    // A Playwright context is incognito-like, which alone keeps any site from installing.
    const errs = installabilityErrors.filter((e) => e.errorId !== 'in-incognito');
    assert.deepEqual(errs, [], JSON.stringify(errs));
    await goOffline(page, server);
    // A reload, and a lesson link typed into the address bar.
    await page.reload();
    await page.waitForSelector('.lesson-list', { timeout: 15000 });
    await page.goto(base + '#/lesson/scsi-starved?v=1&variant=regressed&seed=3&speed=1');
    await page.reload();
    await page.waitForSelector('canvas.diagram', { timeout: 15000 });
    const e0 = Number(await page.getAttribute('[data-testid=live]', 'data-events'));
    await page.waitForFunction((e) => Number(document.querySelector('[data-testid=live]').dataset.events) > e, e0, { timeout: 15000 });
    assert.equal(await page.getAttribute('.app', 'data-variant'), 'regressed');
    // The lesson's text and its scoreboard rows, fetched as files, come from the cache too.
    await page.click('[data-testid=text-gate] .gate-show');
    await page.waitForSelector('.lesson-text [data-testid=fidelity-table]', { timeout: 15000 });
    // As does the sandbox's text (docs/model.md), though the first visit never opened it.
    await page.goto(base + '#/sandbox?v=1');
    await page.waitForFunction(() => (document.querySelector('.lesson-text')?.textContent ?? '').length > 1000, null, { timeout: 15000 });
    assert.equal(await page.locator('[data-testid=fetch-failed]').count(), 0);
    fs.mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, 'offline-lesson.png') });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
  }
});
