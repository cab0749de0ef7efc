// Whole-page tests of the built app (dist/), as a student or an instructor would use it.
// Run by scripts/test after `trunk build --release`; or `npm run e2e` with dist/ present.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { answered, harness, artifacts } from './harness.mjs';

const h = harness();

// Opens a page and records console errors and uncaught exceptions.
async function open(fragment, viewport = { width: 1400, height: 900 }) {
  const page = await h.browser.newPage({ viewport });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(h.base + fragment);
  await page.waitForSelector('canvas.diagram');
  return { page, errors };
}

const events = async (page) => Number(await page.getAttribute('[data-testid=live]', 'data-events'));

// Opens a tab. The panels above the tab bar can still change height in the first frames (the
// counters fill in), and a click that lands while the bar moves hits something else: click
// again until the tab is selected.
async function openTab(page, name) {
  const tab = page.locator(`button[role=tab]:has-text("${name}")`);
  for (let i = 0; i < 5 && (await tab.getAttribute('aria-selected')) !== 'true'; i++) {
    await tab.click();
    await page.waitForTimeout(100);
  }
  assert.equal(await tab.getAttribute('aria-selected'), 'true', `the ${name} tab opens`);
}

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
  assert.match(await page.getAttribute('canvas.diagram', 'aria-label'), /1 disk/);
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
  // The runs are in a Web Worker: the page shows a command's effect when it answers (a frame).
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('.app').dataset.playing === 'false', null, { timeout: 2000 });
  await page.waitForTimeout(200);
  const paused = await events(page);
  await page.waitForTimeout(600);
  assert.equal(await events(page), paused, 'events ran while paused');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=live]').dataset.events) !== n, paused, { timeout: 2000 });
  await page.waitForTimeout(100);
  assert.equal(await events(page), paused + 1, '→ should run exactly one event');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('.app').dataset.playing === 'true', null, { timeout: 2000 });
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid=live]').dataset.events) > n + 1, paused, { timeout: 10000 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a variant toggle restarts the run with that variant', async () => {
  const { page, errors } = await open('#/lesson/anatomy-of-a-request?v=1&speed=0.01');
  await page.click('button.variant:has-text("large-pool")');
  await page.waitForSelector('button.variant[aria-pressed=true]:has-text("large-pool")', { timeout: 2000 });
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

const canvasHash = (page, sel = 'canvas.diagram') => page.$eval(sel, (c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let h = 0;
  for (let i = 0; i < d.length; i += 4 * 13) h = (h * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) | 0;
  return h;
});

test('the diagram has the scenario\'s devices and its tokens move while playing', async () => {
  const { page: many, errors: manyErrors } = await open('#/lesson/scsi-starved?v=1&speed=0.002');
  assert.match(await many.getAttribute('canvas.diagram', 'aria-label'), /12 disk\(s\)/);
  assert.deepEqual(manyErrors, []);
  await many.close();
  // Direct I/O from the first microsecond (scsi-starved's buffered writers fill the page cache
  // before any request moves).
  const { page, errors } = await open('#/lesson/anatomy-of-a-request?v=1&speed=0.05');
  await page.waitForTimeout(800);
  const h1 = await canvasHash(page);
  await page.waitForTimeout(400);
  const h2 = await canvasHash(page);
  assert.notEqual(h1, h2, 'the diagram did not change while playing');
  await page.keyboard.press('Space');
  await page.waitForTimeout(500);
  const h3 = await canvasHash(page);
  await page.waitForTimeout(400);
  assert.equal(await canvasHash(page), h3, 'the diagram changed while paused');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a large array collapses into groups and a click expands one', async () => {
  const { page, errors } = await open('#/lesson/dm-sg-lists?v=1&speed=0.01');
  assert.equal(await page.getAttribute('.app', 'data-expanded'), 'none');
  const box = await page.locator('canvas.diagram').boundingBox();
  // The first group column starts just right of the 118 px stage labels.
  await page.mouse.click(box.x + 140, box.y + box.height * 0.75);
  assert.equal(await page.getAttribute('.app', 'data-expanded'), '0');
  await page.screenshot({ path: path.join(artifacts, 'dm-sg-lists-expanded.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the A/B view runs two variants in lockstep and shows B/A ratios', async () => {
  const { page, errors } = await open('#/lesson/scsi-starved?v=1&speed=1');
  await page.click('button.ab');
  await answered(page);
  assert.equal(await page.getAttribute('.app', 'data-ab'), 'true');
  assert.equal(await page.locator('canvas.diagram').count(), 2);
  await page.waitForSelector('[data-ratio=throughput]', { timeout: 15000 });
  assert.match(await page.textContent('[data-ratio=throughput]'), /B\/A (×[0-9.]+|–)/);
  assert.equal(await page.locator('table.vmstat tbody tr').count(), 2);
  // Lockstep: both runs are at the same simulated time (within a frame).
  await page.keyboard.press('Space');
  await page.waitForTimeout(300);
  const ta = await page.textContent('[data-testid=live]');
  const tb = await page.textContent('[data-testid=live-b]');
  assert.equal(ta.split('events')[0], tb.split('events')[0], `A and B at different times: ${ta} / ${tb}`);
  await page.screenshot({ path: path.join(artifacts, 'scsi-starved-ab.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('in A/B, the run that finishes first does not hold the other back, and both end on whole-run numbers', async () => {
  // nr-requests: fixed (A) is done in about 5.3 s, regressed (B) seconds later. Opened at 7 s,
  // as a link carries it: A is done, B is not.
  const { page, errors } = await open('#/lesson/nr-requests?v=1&variant=fixed&b=regressed&seed=1&t=7&speed=1');
  assert.equal(await page.getAttribute('.app', 'data-ab'), 'true');
  // A is done, B is not: no ratio of a whole run to one second, and the place says why.
  await page.waitForFunction(() => document.querySelector('[data-ratio=throughput]')?.textContent.includes('(A: whole run)'), null, { timeout: 10000 });
  await page.click('text=Skip 5 s');
  await page.waitForFunction(() => document.querySelector('[data-testid=live-b]')?.textContent.includes('all jobs done'), null, { timeout: 20000 });
  // Nothing is left to run: Skip and Step say so by being disabled.
  assert.equal(await page.isDisabled('text=Skip 5 s'), true);
  assert.match(await page.textContent('[data-testid=live]'), /all jobs done/);
  // B's end, as its line says it (t = 9.138 s): the link below must carry it.
  const tB = (await page.textContent('[data-testid=live-b]')).match(/t = (\d+\.\d\d)\d s/)?.[1];
  assert.ok(tB && parseFloat(tB) > 7, `B ends at ${tB}`);
  // Both runs' numbers now cover their whole run: the lesson's own figures.
  await page.waitForFunction(() => (document.querySelector('[data-testid=interval]')?.textContent.match(/the whole run/g) || []).length === 2, null, { timeout: 5000 });
  const a = parseFloat(await page.textContent('[data-counter=throughput] .v:not(.b)'));
  const b = parseFloat(await page.textContent('[data-counter-b=throughput]'));
  assert.ok(a > 60 && b < 60 && b > 25 && a > 1.3 * b, `whole-run MB/s: A ${a}, B ${b}`);
  // The link keeps the later clock: reopened, B is at its end too.
  await page.click('.copy-link');
  const url = await page.inputValue('.copied-url');
  assert.match(url, new RegExp(`b=regressed&seed=1&t=${tB.replace('.', '\\.')}`));
  const { page: other, errors: otherErrors } = await open(url.slice(url.indexOf('#')));
  await other.waitForFunction(() => document.querySelector('[data-testid=live-b]')?.textContent.includes('all jobs done'), null, { timeout: 20000 });
  assert.deepEqual([...errors, ...otherErrors], []);
  await other.close();
  await page.close();
});

test('a run stops at its duration, and its whole-run numbers are blksim run\'s', async () => {
  // scsi-starved's writers never finish: only the duration ends the run. 2.5 s is off a whole
  // second, so the end has no one-second snapshot of its own.
  const { page, errors } = await open('#/lesson/scsi-starved?v=1&variant=regressed&duration=2.5&seed=1&t=1');
  await page.waitForFunction(() => document.querySelector('[data-testid=live]')?.dataset.catchingUp === 'false', null, { timeout: 20000 });
  await page.click('text=Skip 5 s');
  await page.waitForFunction(() => document.querySelector('[data-testid=live]')?.textContent.includes('ended at its duration'), null, { timeout: 20000 });
  assert.match(await page.textContent('[data-testid=live]'), /^t = 2\.500 s .*ended at its duration \(2\.5 s\)/);
  assert.equal(await page.isDisabled('text=Skip 5 s'), true);
  assert.equal(await page.isDisabled('button.play'), true);
  await page.waitForFunction(() => document.querySelector('[data-testid=interval]')?.textContent.includes('the whole run, to its end at 2.500 s'), null, { timeout: 5000 });
  // The CLI's figure for the same run, formatted as the counter formats it.
  const cli = spawnSync('cargo', ['run', '-q', '--release', '-p', 'blksim', '--', 'run', 'scsi-starved', '--variant', 'regressed', '--duration', '2.5', '--seed', '1', '--json'], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  const mb = JSON.parse(cli.stdout).throughput_mb_s;
  const shown = await page.textContent('[data-counter=throughput] .v:not(.b)');
  assert.equal(shown.trim(), mb >= 1000 ? `${(mb / 1000).toFixed(2)} GB/s` : mb >= 100 ? `${mb.toFixed(0)} MB/s` : `${mb.toFixed(1)} MB/s`);
  // A second later, still there.
  await page.waitForTimeout(1000);
  assert.match(await page.textContent('[data-testid=live]'), /^t = 2\.500 s/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('opening A/B mid-run keeps A where it was and brings B to the same time', async () => {
  const { page, errors } = await open('#/lesson/scsi-starved?v=1&speed=0.05');
  await page.click('text=Skip 5 s');
  await page.click('button.ab');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => {
    const t = (id) => parseFloat(document.querySelector(`[data-testid=${id}]`)?.textContent.match(/t = ([0-9.]+) s/)?.[1] ?? 'NaN');
    return t('live') >= 5 && Math.abs(t('live') - t('live-b')) < 0.05;
  }, null, { timeout: 15000 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a chart exports as PNG and its series as CSV', async () => {
  const { page, errors } = await open('#/lesson/scsi-starved?v=1&speed=1');
  await page.waitForSelector('[data-counter=throughput]');
  await page.waitForFunction(() => document.querySelector('.interval')?.textContent.includes('second ending'), null, { timeout: 15000 });
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('text=Export PNG')]);
  // Named for its run, so two exports in a downloads folder say which is which.
  assert.equal(png.suggestedFilename(), 'blkviz-scsi-starved-before-seed1.png');
  const pngPath = path.join(artifacts, 'chart.png');
  await png.saveAs(pngPath);
  const bytes = fs.readFileSync(pngPath);
  assert.deepEqual([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  // The chart with a caption band under it: what it is of and the link (IHDR's size).
  const [w, hImg] = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
  const [cw, ch] = await page.$eval('canvas.chart', (c) => [c.width, c.height]);
  assert.equal(w, cw);
  assert.ok(hImg >= ch + 2 * 16, `image ${hImg} px tall, the chart ${ch}`);
  const [csv] = await Promise.all([page.waitForEvent('download'), page.click('text=Export CSV')]);
  assert.equal(csv.suggestedFilename(), 'blkviz-scsi-starved-before-seed1.csv');
  const csvPath = path.join(artifacts, 'series.csv');
  await csv.saveAs(csvPath);
  const lines = fs.readFileSync(csvPath, 'utf8').trim().split('\n');
  assert.equal(lines[0], 'run,t_s,throughput_mb_s,cs_per_s,cpu_busy_pct,iowait_pct,disks_mb_s,busiest_cpu_pct');
  assert.ok(lines.length >= 2 && lines[1].startsWith('A:before,1.000,'), lines[1]);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the event log shows blkparse lines, filters, pauses and exports', async () => {
  const { page, errors } = await open('#/lesson/anatomy-of-a-request?v=1&speed=0.05');
  await openTab(page, 'Event log');
  await page.waitForFunction(() => /Q +R \d+ \+ \d+ \[dd\]/.test(document.querySelector('[data-testid=blkparse]').textContent), null, { timeout: 10000 });
  await page.fill('input[aria-label^="Actions"]', 'D');
  await page.keyboard.press('Space'); // pause the run (focus is in a text box, so click elsewhere first)
  await page.click('.question', { position: { x: 2, y: 2 } });
  await page.keyboard.press('Space');
  const lines = (await page.textContent('[data-testid=blkparse]')).trim().split('\n');
  assert.ok(lines.length > 0 && lines.every((l) => / D +R /.test(l)), lines.slice(0, 3).join('\n'));
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('text=Export Perfetto JSON')]);
  assert.equal(dl.suggestedFilename(), 'blkviz-anatomy-of-a-request-small_pool-seed1.perfetto.json', 'named for its run');
  const p = path.join(artifacts, 'trace.perfetto.json');
  await dl.saveAs(p);
  const trace = JSON.parse(fs.readFileSync(p, 'utf8'));
  assert.ok(trace.traceEvents.some((e) => e.ph === 'X'), 'no D→C slices in the Perfetto trace');
  // The binary blktrace dump: the real btt reads it (Debian's blktrace, scripts/setup test).
  const [bin] = await Promise.all([page.waitForEvent('download'), page.click('text=Export blktrace')]);
  const dump = path.join(artifacts, 'blkviz.blktrace.dump');
  await bin.saveAs(dump);
  assert.equal(fs.readFileSync(dump).readUInt32LE(0), 0x65617407, 'blktrace magic and version');
  const btt = spawnSync('btt', ['-i', dump], { encoding: 'utf8', cwd: artifacts });
  assert.equal(btt.status, 0, btt.stderr);
  // This lesson's 1 MiB reads are split (X): btt does not follow a split bio to its
  // requests' D and C (blksim replay does, by sector), so check what it does read: every Q
  // and G of the dump.
  const q2g = btt.stdout.split('\n').find((l) => l.startsWith('Q2G'));
  assert.ok(q2g && Number(q2g.trim().split(/\s+/)[4]) > 0, `btt read no Q2G: ${btt.stdout.slice(0, 400)}`);
  assert.ok((await page.textContent('table.btt')).includes('sda'));
  // Letters that are no action code get a hint, not just an empty log.
  await page.fill('input[aria-label^="Actions"]', 'DZ');
  assert.match(await page.textContent('.log-hint'), /not blktrace actions: Z/);
  // A skip runs untraced: the log says where it jumps.
  await page.fill('input[aria-label^="Actions"]', '');
  await page.click('text=Skip 5 s');
  await page.click('.question', { position: { x: 2, y: 2 } });
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('[data-testid=log-span]').textContent.includes('skipped, untraced'), null, { timeout: 10000 });
  // It follows the newest line, as tail -f does.
  const atEnd = await page.$eval('[data-testid=blkparse]', (el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 24);
  assert.ok(atEnd, 'the log shows its newest lines');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a knob applies live where the kernel does, and restarts otherwise', async () => {
  const { page, errors } = await open('#/lesson/anatomy-of-a-request?v=1&speed=0.05');
  await openTab(page, 'Knobs');
  await page.fill('#knob-queue\\.nr_requests', '64');
  await page.press('#knob-queue\\.nr_requests', 'Enter');
  await page.waitForSelector('.knob-msg');
  assert.match(await page.textContent('.knob-msg'), /queue\.nr_requests=64 applied live/);
  await page.fill('#knob-workload\\.numjobs', '3');
  await page.press('#knob-workload\\.numjobs', 'Enter');
  await page.waitForFunction(() => document.querySelector('.knob-msg').textContent.includes('restarted'));
  assert.match(await page.getAttribute('canvas.diagram', 'aria-label'), /3 processes/);
  await page.fill('#knob-queue\\.depth', '-3');
  await page.press('#knob-queue\\.depth', 'Enter');
  await page.waitForFunction(() => document.querySelector('.knob-msg').textContent.includes('not applied'));
  assert.match(await page.textContent('.knob-msg'), /queue\.depth: '-3' is not allowed; expected an integer from 1 to 1024/);
  // The same answer beside the field, where the user typed.
  assert.match(await page.textContent('[data-testid=knob-row-msg]'), /queue\.depth: '-3' is not allowed/);
  // The field keeps what was typed, marked invalid, so it can be corrected.
  assert.equal(await page.inputValue('#knob-queue\\.depth'), '-3');
  assert.equal(await page.getAttribute('#knob-queue\\.depth', 'aria-invalid'), 'true');
  // A knob of a layer this stack lacks is shown greyed, with why, and cannot be set.
  assert.equal(await page.isDisabled('#knob-md\\.chunk_kb'), true);
  assert.match(await page.textContent('[data-knob="md.chunk_kb"]'), /Acts on nothing here: no md device with stack=direct/);
  assert.equal(await page.isDisabled('#knob-iosched\\.slice_idle'), true);
  // Switching to cfq brings cfq's tunables (queue/iosched/ holds the elevator's own files).
  await page.selectOption('#knob-queue\\.scheduler', 'cfq');
  await page.waitForFunction(() => !document.querySelector('#knob-iosched\\.slice_idle').disabled);
  assert.equal(await page.isDisabled('#knob-iosched\\.fifo_batch'), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test('every lesson loads without errors (screenshots kept as artifacts)', async () => {
  for (const id of ['anatomy-of-a-request', 'dm-sg-lists', 'raid5-chunk', 'mq-clone-stall', 'nr-requests', 'scsi-starved']) {
    const { page, errors } = await open(`#/lesson/${id}?v=1&speed=0.5`);
    await page.waitForTimeout(2500);
    await page.screenshot({ path: path.join(artifacts, `lesson-${id}.png`) });
    // The tab names the lesson (its heading's title), for a row of tabs or a bookmark.
    const title = await page.title();
    assert.ok(title.endsWith(' · blkviz') && title.length > 20, `${id}: tab title '${title}'`);
    assert.deepEqual(errors, [], id);
    await page.close();
  }
});

test('an instructor keeps Large type and Presenter from one lesson to the next, and the address bar carries B', async () => {
  const { page, errors } = await open('#/lesson/anatomy-of-a-request?v=1', { width: 1280, height: 720 });
  const large = page.getByRole('button', { name: 'Large type' });
  await large.click();
  assert.equal(await large.getAttribute('aria-pressed'), 'true');
  // The on state shows: the button is not drawn as it is when off.
  const on = await large.evaluate((b) => getComputedStyle(b).backgroundColor);
  await page.click('button.ab');
  await page.waitForFunction(() => location.hash.includes('b='), null, { timeout: 5000 });
  await page.click('a:has-text("next ›")');
  await page.waitForFunction(() => location.hash.startsWith('#/lesson/queue-depth-and-the-elevator'), null, { timeout: 5000 });
  // The tab's title follows the lesson shown.
  await page.waitForFunction(() => /queue depth/i.test(document.title) && !/anatomy/i.test(document.title), null, { timeout: 5000 });
  await page.waitForSelector('canvas.diagram');
  const large2 = page.getByRole('button', { name: 'Large type' });
  assert.equal(await large2.getAttribute('aria-pressed'), 'true', 'Large type survives the move to the next lesson');
  assert.equal(await page.getAttribute('.app', 'data-large'), 'true');
  await large2.click();
  const off = await large2.evaluate((b) => getComputedStyle(b).backgroundColor);
  assert.notEqual(on, off, 'Large type on and off look different');
  assert.deepEqual(errors, []);
  await page.close();
});

// The B picker is a select: once the reader has picked in it, its options' `selected` no
// longer moves it, and Back/Forward left it on the old name while the diagram had the new one.
test('Back and Forward move the B picker with B', async () => {
  const { page, errors } = await open('#/lesson/scsi-starved?v=1&variant=before&b=regressed');
  const picker = 'select[aria-label="Variant of run B"]';
  await page.waitForSelector(picker);
  assert.equal(await page.inputValue(picker), 'regressed');
  await page.selectOption(picker, 'fixed');
  await page.waitForFunction(() => location.hash.includes('b=fixed'), null, { timeout: 5000 });
  await answered(page);
  for (const [go, want] of [['back', 'regressed'], ['forward', 'fixed'], ['back', 'regressed']]) {
    await (go === 'back' ? page.goBack() : page.goForward());
    await page.waitForFunction((w) => location.hash.includes(`b=${w}`), want, { timeout: 5000 });
    await answered(page);
    // B's diagram is the address's B.
    await page.waitForFunction((w) => document.body.innerText.includes(`B · ${w}`), want, { timeout: 5000 });
    await page.waitForTimeout(200);
    assert.equal(await page.inputValue(picker), want, `after ${go}`);
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('vmstat has its real columns, and softirq time is in top\'s %Cpu(s) line', async () => {
  const { page, errors } = await open('#/lesson/dm-sg-lists?v=1&speed=1');
  await page.waitForSelector('table.vmstat thead');
  const head = await page.$$eval('table.vmstat thead th', (ths) => ths.map((t) => t.textContent).filter((t) => t).join(' '));
  assert.equal(head, 'r b bi bo in cs us sy id wa');
  assert.match(await page.textContent('[data-counter=cpu-line]'), /%Cpu\(s\): .* si/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('on a phone (390 px wide) no page is wider than the screen: the tables scroll, not the page', async () => {
  const { LESSONS } = await import('./harness.mjs');
  for (const fragment of ['#/', '#/sandbox', '#/trace', '#/fidelity', ...LESSONS.map((id) => `#/lesson/${id}`)]) {
    const page = await h.browser.newPage({ viewport: { width: 390, height: 844 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(h.base + fragment);
    await page.waitForFunction(() => document.body.innerText.length > 100);
    await page.waitForTimeout(fragment.startsWith('#/lesson') ? 1500 : 500);
    const wide = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      // What sticks out, for the message.
      what: [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > innerWidth + 1 && el.closest('table, pre, .table-scroll, .iostat, .cpu-line, .knobs, .sweep-table') === null).slice(0, 3).map((el) => `${el.tagName}.${el.className}`),
    }));
    assert.ok(wide.page <= 390, `${fragment}: the page is ${wide.page} px wide (${wide.what.join(', ')})`);
    assert.deepEqual(errors, [], fragment);
    await page.close();
  }
});
