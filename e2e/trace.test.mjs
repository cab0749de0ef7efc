// The trace page as a kernel engineer uses it: open blktrace's per-CPU files (a short run of the
// queue-depth primer written by `blksim trace`, in e2e/fixtures) or the text the real blkparse
// printed for them, and read btt's phases, iostat, the offset chart and the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { harness, artifacts, root } from './harness.mjs';

const h = harness();
const fixtures = path.join(root, 'e2e', 'fixtures');

async function openTrace() {
  const page = await h.browser.newPage({ viewport: { width: 1300, height: 1100 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(h.base + '#/');
  await page.click('[data-testid=trace-link]');
  await page.waitForSelector('[data-testid=trace-files]');
  return { page, errors };
}

// How many colours a canvas shows (sampled): more than a few once a chart has been drawn.
const colours = (page, testid) => page.$eval(`[data-testid=${testid}]`, (c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const seen = new Set();
  for (let i = 0; i < d.length; i += 4 * 31) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  return seen.size;
});

const row = (page, phase) => page.$$eval('[data-testid=trace-btt] tbody tr', (rows, p) => {
  const r = rows.find((tr) => tr.cells[0].textContent === p);
  return r ? [...r.cells].map((c) => c.textContent) : null;
}, phase);

test('binary blktrace files open in the page with btt, iostat, offsets and the log', async () => {
  const { page, errors } = await openTrace();
  await page.setInputFiles('[data-testid=trace-files]', [path.join(fixtures, 'sda.blktrace.0'), path.join(fixtures, 'sda.blktrace.1')]);
  await page.waitForSelector('[data-testid=trace-summary]');
  assert.match(await page.textContent('[data-testid=trace-summary]'), /^2104 records from sda\.blktrace\.0, sda\.blktrace\.1/);
  // btt's figures, as `blksim replay` (and the real btt) give them for these files.
  const d2c = await row(page, 'D2C');
  assert.deepEqual([d2c[2], d2c[4]], ['0.000403106', '274']);
  assert.equal((await row(page, 'Q2C'))[4], '274');
  assert.equal(await page.locator('[data-testid=trace-iostat] tbody tr').count(), 1);
  assert.match(await page.textContent('[data-testid=trace-iostat] tbody tr'), /^8,0/);
  const log = await page.textContent('[data-testid=trace-log]');
  assert.match(log.split('\n')[0], /^\s+8,0\s+\d+\s+\d+\s+0\.000000000\s+\d+\s+[A-Z]+\s+[RWN]/);
  // The offset chart has been drawn: more than a couple of colours on it.
  const drawn = await colours(page, 'trace-offsets');
  assert.ok(drawn > 4, `offset chart looks blank (${drawn} colours)`);
  // D2C over time pairs every request btt's D2C counts, and is drawn.
  assert.match(await page.getAttribute('[data-testid=trace-d2c-heat]', 'aria-label'), /; 274 requests paired$/);
  const heat = await colours(page, 'trace-d2c-heat');
  assert.ok(heat > 4, `D2C heat map looks blank (${heat} colours)`);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'trace-page.png'), fullPage: true });
  // blkparse's text of the same files reads to the same figures.
  await page.setInputFiles('[data-testid=trace-files]', [path.join(fixtures, 'sda.blkparse.txt')]);
  await page.waitForFunction(() => document.querySelector('[data-testid=trace-summary]')?.textContent.includes('sda.blkparse.txt'));
  assert.match(await page.textContent('[data-testid=trace-summary]'), /^2104 records/);
  assert.deepEqual(await row(page, 'D2C'), d2c);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a file that is no trace gets one message naming it and what was expected; a cut one is read up to the cut', async () => {
  const { page, errors } = await openTrace();
  await page.setInputFiles('[data-testid=trace-files]', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('lecture notes\nnothing here\n') });
  await page.waitForSelector('[data-testid=trace-error]');
  const msg = await page.textContent('[data-testid=trace-error]');
  assert.match(msg, /^notes\.txt: expected blkparse records/);
  // A binary file cut in the middle of a record (a trace written until the disk filled): read
  // up to the cut, as blkparse reads it, and the page says where.
  const cut = fs.readFileSync(path.join(fixtures, 'sda.blktrace.0')).subarray(0, 1001);
  await page.setInputFiles('[data-testid=trace-files]', { name: 'sda.blktrace.0', mimeType: 'application/octet-stream', buffer: cut });
  await page.waitForSelector('[data-testid=trace-cut]');
  assert.match(await page.textContent('[data-testid=trace-cut]'), /^sda\.blktrace\.0: cut short at byte 1000 \(a 48-byte blk_io_trace header, 1 byte\(s\) left\): read up to it, as blkparse does/);
  assert.match(await page.textContent('[data-testid=trace-summary]'), /^\d+ records from sda\.blktrace\.0/);
  // A whole directory picked (blksim trace writes blkparse's text beside the binary files):
  // each record would count twice, so the page says which files hold the same records.
  await page.setInputFiles('[data-testid=trace-files]', ['sda.blktrace.0', 'sda.blktrace.1', 'sda.blkparse.txt'].map((f) => path.join(fixtures, f)));
  await page.waitForSelector('[data-testid=trace-error]');
  assert.match(await page.textContent('[data-testid=trace-error]'), /^'sda\.blktrace\.0' and 'sda\.blkparse\.txt' both hold device 8,0 CPU 0's records \d+ to \d+: each would count twice/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a lesson's run traced beside a real trace: the same tables and chart for both, side by side", async () => {
  const { page, errors } = await openTrace();
  await page.setInputFiles('[data-testid=trace-files]', [path.join(fixtures, 'sda.blktrace.0'), path.join(fixtures, 'sda.blktrace.1')]);
  await page.waitForSelector('[data-testid=trace-summary]');
  await page.selectOption('[data-testid=run-lesson]', 'nr-requests');
  await page.selectOption('[data-testid=run-variant]', 'workaround');
  await page.fill('[data-testid=run-seconds]', '0.3');
  await page.dispatchEvent('[data-testid=run-seconds]', 'change');
  await page.click('[data-testid=run-beside]');
  await page.waitForSelector('[data-testid=run-summary]');
  assert.match(await page.textContent('[data-testid=run-summary]'), /records from nr-requests \/ workaround, seed 1, traced from t = \d+(\.\d+)? s for 0\.3 s over/);
  // The run's btt: its dm lines (dm-0 over sda) and the disk's phases, within the CPU step's
  // microseconds (Q2G, G2I) as the kernel's trace shows them.
  const runRow = (p) => page.$$eval('[data-testid=run-btt] tbody tr', (rows, x) => {
    const r = rows.find((tr) => tr.cells[0].textContent === x);
    return r ? [...r.cells].map((c) => c.textContent) : null;
  }, p);
  for (const p of ['Q2Cdm', 'Q2G', 'G2I', 'D2C']) {
    const r = await runRow(p);
    assert.ok(r && Number(r[4]) > 0, `${p}: ${r}`);
  }
  assert.ok(Number((await runRow('G2I'))[2]) > 0, 'G2I averages above 0');
  // The trace's own figures are still there, beside the run's, in two columns.
  assert.equal((await row(page, 'D2C'))[4], '274');
  const boxes = await page.$$eval('.trace-cols.pair > section', (s) => s.map((x) => x.getBoundingClientRect().left));
  assert.equal(boxes.length, 2);
  assert.ok(boxes[1] > boxes[0] + 300, `columns side by side: ${boxes}`);
  const runDrawn = await colours(page, 'run-offsets');
  assert.ok(runDrawn > 4, `the run's offset chart looks blank (${runDrawn} colours)`);
  await page.screenshot({ path: path.join(artifacts, 'trace-beside-run.png'), fullPage: true });
  // A bad duration: one message naming it and what is allowed.
  await page.fill('[data-testid=run-seconds]', '99');
  await page.dispatchEvent('[data-testid=run-seconds]', 'change');
  await page.click('[data-testid=run-beside]');
  await page.waitForSelector('[data-testid=run-error]');
  assert.match(await page.textContent('[data-testid=run-error]'), /seconds to trace: 99 is not allowed; expected more than 0 and at most 10/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the trace reader is a wasm of its own: a lesson link downloads none of it, the trace page reads in it', async () => {
  const context = await h.browser.newContext({ serviceWorkers: 'block', viewport: { width: 1300, height: 1100 } });
  const fetched = [];
  // Requests from the page and from its dedicated workers.
  context.on('request', (r) => fetched.push(new URL(r.url()).pathname));
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(h.base + '#/lesson/anatomy-of-a-request?v=1');
  await page.waitForSelector('canvas.diagram');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid=live]')?.dataset.events) > 0);
  assert.deepEqual(fetched.filter((p) => /trace[-_]worker/.test(p)), [], 'the lesson page fetched the trace reader');
  assert.deepEqual(fetched.filter((p) => /job[-_]worker/.test(p)), [], 'the lesson page fetched the job-file reader');
  await page.goto(h.base + '#/');
  await page.click('[data-testid=trace-link]');
  await page.setInputFiles('[data-testid=trace-files]', [path.join(fixtures, 'sda.blktrace.0'), path.join(fixtures, 'sda.blktrace.1')]);
  await page.waitForSelector('[data-testid=trace-summary]');
  assert.match(await page.textContent('[data-testid=trace-summary]'), /^2104 records from sda\.blktrace\.0, sda\.blktrace\.1/);
  assert.ok(fetched.includes('/trace-worker.js') && fetched.includes('/trace_worker_bg.wasm'), fetched.join(' '));
  assert.deepEqual(errors, []);
  await context.close();
});

test('a trace reader that cannot load gets one message, and the next try starts a fresh one', async () => {
  const context = await h.browser.newContext({ serviceWorkers: 'block', viewport: { width: 1300, height: 1100 } });
  await context.route('**/trace_worker_bg.wasm', (r) => r.fulfill({ status: 404, body: 'not found' }));
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(h.base + '#/');
  await page.click('[data-testid=trace-link]');
  await page.setInputFiles('[data-testid=trace-files]', [path.join(fixtures, 'sda.blkparse.txt')]);
  await page.waitForSelector('[data-testid=trace-error]');
  assert.match(await page.textContent('[data-testid=trace-error]'), /^the trace reader failed/);
  assert.equal(await page.locator('text=reading…').count(), 0, 'still reading after the failure');
  // The wasm is back: the same files read, in a fresh worker.
  await context.unroute('**/trace_worker_bg.wasm');
  await page.setInputFiles('[data-testid=trace-files]', [path.join(fixtures, 'sda.blktrace.0')]);
  await page.waitForSelector('[data-testid=trace-summary]');
  assert.match(await page.textContent('[data-testid=trace-summary]'), /records from sda\.blktrace\.0/);
  assert.deepEqual(errors, []);
  await context.close();
});
