// Several fio jobs on one page, as a student pastes them: a row per job in the numbers, each in
// its job's colour, the latency chart's legend naming them, the link keeping them, and A/B
// comparing them job by job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { answered, harness, artifacts, openPage } from './harness.mjs';

const h = harness();

const JOB_FILE = '[global]\nioengine=libaio\ndirect=1\nbs=64k\niodepth=4\nfilename=/dev/sda\n[reader]\nrw=read\n[writer]\nrw=write\n';

/// The job rows' cells, by job and direction: { 'reader read': { mb_s, iops, p99 }, … }.
const jobRows = (page) => page.$$eval('[data-testid=job-rows] tbody tr[data-job]', (trs) => Object.fromEntries(trs.map((tr) => [
  [tr.dataset.job, tr.dataset.dir, tr.dataset.run].filter(Boolean).join(' '),
  Object.fromEntries([...tr.querySelectorAll('td[data-col]')].map((td) => [td.dataset.col, td.textContent.trim()])),
])));

/// Waits until every row of `keys` shows I/Os done (a p99 latency).
const rowsWithFigures = (page, keys) => page.waitForFunction((keys) => keys.every((k) => {
  const [job, dir, run] = k.split(' ');
  const tr = document.querySelector(`[data-testid=job-rows] tr[data-job="${job}"][data-dir="${dir}"]${run ? `[data-run="${run}"]` : ''}`);
  return tr && tr.querySelector('td[data-col=p99]').textContent.trim() !== '–';
}), keys, { timeout: 20000 });

/// The computed colour of job `name`'s swatch in `scope`.
const swatch = (page, scope, name) => page.$eval(`${scope} [data-job="${name}"] .job-swatch`, (s) => getComputedStyle(s).backgroundColor);

// Screenshots of the job rows for a look: at the page's size (scrolled to them when `scroll`),
// then on a phone, scrolled to them.
async function shootJobRows(page, name, scroll) {
  if (scroll) await page.locator('[data-testid=job-rows]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(artifacts, `${name}-1280.png`) });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('[data-testid=job-rows]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(artifacts, `${name}-390.png`) });
}

test('a job file with a reader and a writer shows a row per job, each named and in its colour', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await openPage(h, ctx, '#/sandbox?v=1&speed=0.5');
  await page.waitForSelector('textarea');
  // One job: no job rows (the big numbers are that job's).
  assert.equal(await page.locator('[data-testid=job-rows]').count(), 0);
  await page.fill('textarea', JOB_FILE);
  await page.click('[data-testid=apply-fio]');
  await page.waitForSelector('.sandbox .knob-msg');
  assert.match(await page.textContent('.sandbox .knob-msg'), /applied the job/);
  await answered(page);
  if ((await page.getAttribute('.app', 'data-playing')) === 'false') await page.click('button.play');
  await rowsWithFigures(page, ['reader read', 'writer write']);
  const rows = await jobRows(page);
  // Each job's own direction only: the reader reads, the writer writes.
  assert.deepEqual(Object.keys(rows).sort(), ['reader read', 'writer write']);
  const [r, w] = [rows['reader read'], rows['writer write']];
  assert.match(r.mb_s, /MB\/s|GB\/s/);
  assert.notDeepEqual(r, w, 'the two jobs have figures of their own');
  // The names, in the job file's order, and each job's colour (Okabe–Ito's orange and blue).
  const names = await page.$$eval('[data-testid=job-rows] td.name', (tds) => tds.map((td) => td.textContent.trim()).filter(Boolean));
  assert.deepEqual(names, ['reader', 'writer']);
  assert.equal(await swatch(page, '[data-testid=job-rows]', 'reader'), 'rgb(230, 159, 0)');
  assert.equal(await swatch(page, '[data-testid=job-rows]', 'writer'), 'rgb(0, 114, 178)');
  // The latency chart draws a series per job; its legend names them in the same colours.
  const legend = await page.$$eval('[data-testid=job-legend] li', (lis) => lis.map((li) => li.textContent.trim()));
  assert.deepEqual(legend, ['reader', 'writer']);
  assert.equal(await swatch(page, '[data-testid=job-legend]', 'reader'), 'rgb(230, 159, 0)');
  assert.equal(await swatch(page, '[data-testid=job-legend]', 'writer'), 'rgb(0, 114, 178)');
  // The box shows every section, as a job file.
  const box = await page.inputValue('textarea');
  assert.match(box, /\[reader\]\nrw=read\n[\s\S]*\[writer\]\nrw=write\n/);
  await shootJobRows(page, 'jobs-sandbox', false);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a link with two jobs reopens with both rows and both sections in the box', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await openPage(h, ctx, '#/sandbox?v=1');
  await page.waitForSelector('textarea');
  await page.fill('textarea', JOB_FILE);
  await page.click('[data-testid=apply-fio]');
  await page.waitForSelector('.sandbox .knob-msg');
  await page.waitForFunction(() => location.hash.includes('job.writer.rw=write'), null, { timeout: 5000 });
  const link = new URL(page.url()).hash;
  assert.match(link, /workload\.name=reader/);
  // Opened at 1.5 s, the numbers are there without playing.
  const { page: again, errors: againErrors } = await openPage(h, ctx, `${link}&t=1.5`, { width: 1280, height: 720 });
  await again.waitForSelector('textarea');
  await rowsWithFigures(again, ['reader read', 'writer write']);
  assert.deepEqual(Object.keys(await jobRows(again)).sort(), ['reader read', 'writer write']);
  assert.match(await again.inputValue('textarea'), /\[reader\]\nrw=read\n[\s\S]*\[writer\]\nrw=write\n/);
  assert.deepEqual([...errors, ...againErrors], []);
  await ctx.close();
});

test('A/B compares job by job: each job\'s row in A over its row in B, with B/A', async () => {
  const ctx = await h.browser.newContext();
  const fragment = '#/lesson/queue-depth-and-the-elevator?v=1&variant=deep&b=shallow&workload.name=reader&workload.rw=read&job.writer.rw=write&seed=1&t=2';
  const { page, errors } = await openPage(h, ctx, fragment, { width: 1280, height: 720 });
  await page.waitForSelector('canvas.diagram');
  await rowsWithFigures(page, ['reader read A', 'reader read B', 'writer write A', 'writer write B']);
  const order = await page.$$eval('[data-testid=job-rows] tbody tr', (trs) => trs.map((tr) => `${tr.dataset.job} ${tr.dataset.run}`));
  assert.deepEqual(order, ['reader A', 'reader B', 'writer A', 'writer B']);
  const rows = await jobRows(page);
  for (const job of ['reader read', 'writer write']) {
    assert.match(rows[`${job} B`].ratio, /^×\d/, `${job}: B/A`);
    assert.equal(rows[`${job} A`].ratio, '', `${job}: A's row has no ratio`);
  }
  await shootJobRows(page, 'jobs-ab', true);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('the sandbox compares two setups: B starts as a copy of A and takes knobs of its own, kept in the link', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await openPage(h, ctx, '#/sandbox?v=1&disks=2&speed=0.5');
  await page.click('button.ab');
  await page.waitForSelector('[data-testid=knobs-of-b]');
  assert.match(await page.textContent('[data-testid=b-own]'), /B is a copy of A/);
  // B alone: its elevator changes, A's does not; the panel shows B's value and A's beside it.
  await page.click('[data-testid=knobs-of-b]');
  await page.selectOption('#knob-queue\\.scheduler', 'cfq');
  await answered(page);
  await page.waitForFunction(() => document.querySelector('[data-testid=b-own]').textContent.includes('queue.scheduler=cfq'));
  assert.match(await page.textContent('[data-knob="queue.scheduler"] [data-testid=knob-other]'), /A: noop/);
  await page.waitForFunction(() => location.hash.includes('b.queue.scheduler=cfq'));
  assert.match(await page.evaluate(() => location.hash), /&disks=2&b\.queue\.scheduler=cfq/);
  // Back to both: the panel shows A's value, and B's beside it.
  await page.click('[data-testid=knobs-of-both]');
  assert.equal(await page.inputValue('#knob-queue\\.scheduler'), 'noop');
  assert.match(await page.textContent('[data-knob="queue.scheduler"] [data-testid=knob-other]'), /B: cfq/);
  // Two diagrams, and the link opens both runs again as they were.
  assert.equal(await page.locator('canvas.diagram').count(), 2);
  await page.screenshot({ path: path.join(artifacts, 'sandbox-ab-1400.png') });
  const link = await page.evaluate(() => location.hash);
  const again = await ctx.newPage();
  await again.setViewportSize({ width: 1400, height: 900 });
  await again.goto(h.base + link);
  await again.waitForSelector('[data-testid=knobs-of-b]');
  assert.match(await again.textContent('[data-testid=b-own]'), /queue\.scheduler=cfq/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a bs off the 512-byte sector in the sandbox\'s knob runs rounded up to it, said on the line beside the box', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await openPage(h, ctx, '#/sandbox?v=1&speed=0.5');
  await page.waitForSelector('#knob-workload\\.bs');
  await page.fill('#knob-workload\\.bs', '3000');
  await page.dispatchEvent('#knob-workload\\.bs', 'change');
  await answered(page);
  await page.waitForSelector('[data-testid=knob-row-msg]');
  assert.match(await page.textContent('[data-testid=knob-row-msg]'), /^bs=3000 is not a multiple of 512 \(the sector\), so it runs as bs=3072, rounded up/);
  await page.waitForFunction(() => /workload\.bs=(3072|3k)(&|$)/.test(location.hash), null, { timeout: 5000 });
  assert.match(await page.inputValue('#knob-workload\\.bs'), /^(3072|3k)$/);
  assert.equal(await page.getAttribute('#knob-workload\\.bs', 'aria-invalid'), 'false');
  // A whole-sector size is taken as it is, with no such line.
  await page.fill('#knob-workload\\.bs', '8k');
  await page.dispatchEvent('#knob-workload\\.bs', 'change');
  await answered(page);
  await page.waitForFunction(() => location.hash.includes('workload.bs=8k'), null, { timeout: 5000 });
  assert.doesNotMatch(await page.textContent('[data-testid=knob-row-msg]'), /rounded/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('where no Web Worker can start, the sandbox reads a job file on the page\'s thread and applies it the same', async () => {
  const ctx = await h.browser.newContext();
  const messages = [];
  for (const noWorkers of [false, true]) {
    const init = noWorkers ? () => { window.Worker = function () { throw new Error('no workers here'); }; } : undefined;
    const { page, errors } = await openPage(h, ctx, '#/sandbox?v=1', undefined, init);
    await page.waitForSelector('textarea');
    await page.fill('textarea', '[a]\nverify=md5\nrw=randwrite\n');
    await page.click('[data-testid=apply-fio]');
    await page.waitForSelector('.sandbox .knob-msg');
    messages.push(await page.textContent('.sandbox .knob-msg'));
    assert.match(page.url(), /workload\.rw=randwrite/);
    assert.deepEqual(errors, []);
    await page.close();
  }
  assert.match(messages[0], /^applied the job .*not modelled: verify=md5/);
  assert.equal(messages[1], messages[0]);
  await ctx.close();
});
