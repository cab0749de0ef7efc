// Lessons, presenter mode and links, as an instructor, a student and a kernel engineer use them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { answered, harness, root, artifacts, openPage, LESSONS } from './harness.mjs';

const h = harness();

const open = (context, fragment) => openPage(h, context, fragment);


test('the home page lists every lesson with its question', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '');
  await page.waitForSelector('.lesson-list');
  const links = await page.$$eval('.lesson-card a', (as) => as.map((a) => a.getAttribute('href')));
  for (const id of LESSONS) assert.ok(links.includes(`#/lesson/${id}?v=1`), `${id} missing from the home page`);
  assert.ok(links.includes('#/sandbox?v=1'));
  await page.click(`a[href="#/lesson/nr-requests?v=1"]`);
  await page.waitForSelector('canvas.diagram');
  assert.equal(await page.getAttribute('.app', 'data-lesson'), 'nr-requests');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('every lesson page loads without errors, and its toggle changes the variant', async () => {
  const ctx = await h.browser.newContext();
  for (const id of LESSONS) {
    const { page, errors } = await open(ctx, `#/lesson/${id}?v=1&speed=0.05`);
    await page.waitForSelector('canvas.diagram');
    const buttons = page.locator('.variants button.variant');
    assert.ok((await buttons.count()) >= 2, id);
    const second = await buttons.nth(1).textContent();
    await buttons.nth(1).click();
    // The page shows it (and the address takes it) when the runs' worker answers: a frame.
    await page.waitForFunction((v) => document.querySelector('.app').dataset.variant === v && location.hash.includes(`variant=${v}`), second, { timeout: 2000 });
    // The text answers the prediction: it waits behind its gate until asked for.
    if (await page.locator('[data-testid=text-gate]').count()) await page.click('.gate-show');
    assert.ok((await page.textContent('.lesson-text')).length > 200, `${id}: no lesson text`);
    assert.deepEqual(errors, [], id);
    await page.close();
  }
  await ctx.close();
});

test('predict, run, then reveal', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/queue-depth-and-the-elevator?v=1');
  // The prediction is a stop of its own in the steps list (the Lesson tab): its button goes
  // there, beside the diagram.
  assert.equal(await page.locator('.predict').count(), 0, 'no prediction box before its stop');
  await page.click('.steps li.predict-stop button');
  await page.waitForSelector('[data-testid=step-panel] .predict');
  assert.match(await page.textContent('[data-testid=step-bar]'), /^2\/4\s*Predict/);
  assert.equal(await page.isDisabled('.predict-run'), true, 'Run before choosing');
  assert.equal(await page.isDisabled('.predict-reveal'), true, 'Reveal before running');
  await page.locator('.predict input[type=radio]').nth(1).check();
  await page.click('.predict-run');
  await page.waitForFunction(() => document.querySelector('.app').dataset.ab === 'true', null, { timeout: 2000 }); // Run opens the A/B view
  assert.equal((await page.textContent('.predict-run')).trim(), 'Restart (A/B)', 'while the runs are under way, the button restarts them');
  await page.click('.predict-reveal');
  const reveal = await page.textContent('[data-testid=reveal]');
  assert.match(reveal, /^Right\./);
  assert.equal(await page.isDisabled('.predict-reveal'), true, 'nothing more to reveal');
  assert.equal((await page.textContent('.predict-reveal')).trim(), 'Revealed');
  assert.match(reveal, /merge/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('the lesson text waits until the prediction is answered, and shows at once when asked for', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/queue-depth-and-the-elevator?v=1', { width: 1400, height: 900 });
  await page.waitForSelector('[data-testid=text-gate]');
  // The title shows, and what to watch (terms, no outcome); the text that gives the answer
  // away does not.
  assert.equal(await page.locator('.lesson-text h1').count(), 1);
  assert.equal(await page.locator('.lesson-text h2:not([data-testid=watch] h2), .lesson-text p:not([data-testid=text-gate] p):not([data-testid=watch] p)').count(), 0);
  assert.equal((await page.textContent('[data-testid=watch] h2')).trim(), 'What to watch');
  assert.match(await page.textContent('[data-testid=watch]'), /wrqm\/s/);
  assert.doesNotMatch(await page.textContent('[data-testid=watch]'), /backlog|fuse/);
  assert.match(await page.textContent('[data-testid=text-gate]'), /so it answers the lesson's prediction \(asked after step 1\)/);
  // Its first button goes to the prediction, beside the diagram.
  await page.click('.gate-predict');
  await page.waitForSelector('[data-testid=step-panel] .predict');
  assert.match(await page.textContent('[data-testid=step-bar]'), /^2\/4\s*Predict/);
  await page.locator('.predict input[type=radio]').nth(1).check();
  await page.click('.predict-run');
  await page.click('.predict-reveal');
  // Revealed: the whole text is there.
  await page.waitForFunction(() => !document.querySelector('[data-testid=text-gate]') && document.querySelectorAll('.lesson-text h2').length > 0);
  // A kernel engineer who wants the mechanism first: one click, kept for the browser tab.
  await page.goto(h.base + '#/lesson/scsi-starved?v=1');
  await page.click('[data-testid=text-gate] .gate-show');
  await page.waitForSelector('.lesson-text [data-testid=fidelity-table]');
  await page.reload();
  await page.waitForSelector('.lesson-text [data-testid=fidelity-table]');
  assert.equal(await page.locator('[data-testid=text-gate]').count(), 0);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('the latency chart shows each second\'s latencies over time, for A and B', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/scsi-starved?v=1&variant=before&b=regressed&seed=1&t=4');
  await page.waitForFunction(() => document.querySelector('[data-testid=live]')?.dataset.catchingUp === 'false', null, { timeout: 60000 });
  assert.equal(await page.getAttribute('canvas.latency', 'data-view'), 'histogram');
  await page.click('.latency-view button:has-text("Over time")');
  await page.waitForFunction(() => document.querySelector('canvas.latency').dataset.view === 'over-time');
  assert.match(await page.getAttribute('canvas.latency', 'aria-label'), /heat map/);
  assert.equal(await page.getAttribute('.latency-view button:has-text("Over time")', 'aria-pressed'), 'true');
  // Cells in the heat map's colours (pale yellow to deep red) in A's half and in B's, after
  // the next redraw.
  await page.waitForTimeout(500);
  const cells = await page.$eval('canvas.latency', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const halves = [0, 0];
    for (let y = 0; y < c.height; y++) {
      for (let x = 0; x < c.width; x++) {
        const i = (y * c.width + x) * 4;
        const [r, g, b] = [d[i], d[i + 1], d[i + 2]];
        if (r >= 0xbd && b >= 0x26 && b <= 0x8c && g <= 0xe8) halves[y < c.height / 2 ? 0 : 1]++;
      }
    }
    return halves;
  });
  assert.ok(cells[0] > 500 && cells[1] > 500, `heat cells in A's and B's halves: ${cells}`);
  await page.click('.latency-view button:has-text("Histogram")');
  await page.waitForFunction(() => document.querySelector('canvas.latency').dataset.view === 'histogram');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('presenter mode: PageDown moves through the steps, and the notes window follows', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/scsi-starved?v=1');
  await page.waitForSelector('canvas.diagram');
  await page.click('.presenter-toggle');
  assert.equal(await page.getAttribute('.app', 'data-presenter'), 'true');
  assert.equal(await page.isVisible('.lesson-text'), false, 'the prose hides');
  const fontPx = await page.$eval('.app', (el) => parseFloat(getComputedStyle(el).fontSize));
  assert.ok(fontPx >= 20, `presenter text is ${fontPx}px`);
  const { page: notes } = await open(ctx, '#/notes/scsi-starved');
  await notes.waitForSelector('[data-testid=notes-title]');
  // Before the first PageDown no step shows, and the notes say so.
  await notes.waitForFunction(() => document.querySelector('.notes-page').dataset.step === 'none', null, { timeout: 5000 });
  assert.match(await notes.textContent('[data-testid=notes-title]'), /Before the steps \(0 of 4\)/);
  await page.bringToFront();
  await page.click('h1', { position: { x: 1, y: 1 }, trial: true });
  await page.keyboard.press('PageDown');
  assert.match(await page.textContent('[data-testid=step-bar]'), /1\/4\s*One HBA, twelve disks/);
  // The prediction comes before the step that shows its answer; the notes give the presenter
  // the answer, the page keeps it for the reveal.
  await page.keyboard.press('PageDown');
  assert.match(await page.textContent('[data-testid=step-bar]'), /2\/4\s*Predict/);
  await answered(page);
  assert.equal(await page.getAttribute('.app', 'data-ab'), 'false', 'the prediction shows no comparison yet');
  await notes.waitForFunction(() => document.querySelector('.notes-page').dataset.step === '1', null, { timeout: 5000 });
  assert.match(await notes.textContent('[data-testid=notes-text]'), /^Poll the room: Punting starved/);
  assert.match(await notes.textContent('[data-testid=notes-answer]'), /^Answer: /);
  // The question asks about what the model shows (throughput, fairness), so no warning that
  // the run will not show the answer.
  assert.equal(await notes.locator('[data-testid=notes-uncal]').count(), 0);
  await page.keyboard.press('PageDown');
  assert.match(await page.textContent('[data-testid=step-bar]'), /3\/4\s*Before and after c21e6beb/);
  await answered(page);
  assert.equal(await page.getAttribute('.app', 'data-ab'), 'true', 'this step opens the A/B view');
  await notes.waitForFunction(() => document.querySelector('.notes-page').dataset.step === '2', null, { timeout: 5000 });
  assert.match(await notes.textContent('[data-testid=notes-text]'), /4x the context switches/);
  await page.keyboard.press('PageUp');
  assert.match(await page.textContent('[data-testid=step-bar]'), /2\/4/);
  await page.keyboard.press('p');
  assert.equal(await page.getAttribute('.app', 'data-presenter'), 'false');
  // Escape leaves it too, as it leaves a slide show.
  await page.keyboard.press('p');
  assert.equal(await page.getAttribute('.app', 'data-presenter'), 'true');
  await page.keyboard.press('Escape');
  assert.equal(await page.getAttribute('.app', 'data-presenter'), 'false');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a copied link opened in a new page shows the same counters at the same time', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/scsi-starved?v=1&variant=regressed&seed=9&speed=1');
  await page.waitForFunction(() => document.querySelector('.interval')?.textContent.includes('second ending at 2'), null, { timeout: 20000 });
  await page.keyboard.press('Space');
  await page.waitForTimeout(200);
  await page.click('.copy-link');
  const url = await page.inputValue('.copied-url');
  assert.match(url, /#\/lesson\/scsi-starved\?v=1&variant=regressed&seed=9&t=[0-9.]+&speed=1$/);
  const want = await page.textContent('.counters');
  const { page: other, errors: otherErrors } = await open(ctx, url.slice(url.indexOf('#')));
  // The page runs to the link's time point over a few frames, then shows its counters.
  await other.waitForFunction(() => document.querySelector('[data-testid=live]')?.dataset.catchingUp === 'false');
  await other.waitForSelector('.counters .big');
  assert.equal(await other.getAttribute('.app', 'data-playing'), 'false', 'a link with t opens paused');
  assert.equal(await other.textContent('.counters'), want);
  // The event log opens on the trace that led up to t (the replay traces its last 500 ms),
  // and btt has the requests seen whole in it.
  // blkparse names the context that issued each request: here mostly scsi_run_queue in the
  // completion softirq on an idle CPU, not the flusher that queued it.
  await other.click('button[role=tab]:has-text("Event log")');
  await other.fill('input[aria-label^="Actions"]', 'D');
  const log = await other.textContent('[data-testid=blkparse]');
  assert.match(await other.textContent('[data-testid=log-span]'), /with a skipped, untraced stretch/);
  assert.match(log, / D +W \d+ \+ \d+ \[swapper\]/);
  const seen = await other.$$eval('table.btt tbody tr', (rows) => rows.map((r) => Number(r.cells[1].textContent)));
  assert.ok(seen.some((n) => n > 0), `btt rows: ${seen}`);
  // The copied link shows until the state changes; then it would be another run's link.
  assert.equal(await page.isVisible('.copied-url'), true);
  await page.click('button.variant:has-text("fixed")');
  await page.waitForFunction(() => document.querySelector('.app').dataset.variant === 'fixed');
  assert.equal(await page.isVisible('.copied-url'), false, 'a stale link stays on screen');
  assert.deepEqual([...errors, ...otherErrors], []);
  await ctx.close();
});

test('presenter mode at 1280x720: both runs of an A/B step fit on the screen', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/dm-sg-lists?v=1');
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.waitForSelector('canvas.diagram');
  // Its six variants: the header takes three lines (about 120 px; four, 154 px, when the
  // variants wrapped alone), and two in presenter mode (about 79 px; Legend wrapped alone).
  const barHeight = () => page.$eval('.bar', (e) => e.getBoundingClientRect().height);
  assert.ok((await barHeight()) < 135, `the header is ${await barHeight()} px tall`);
  await page.click('.presenter-toggle');
  await page.waitForFunction(() => document.querySelector('.app').dataset.presenter === 'true');
  assert.ok((await barHeight()) < 95, `in presenter mode the header is ${await barHeight()} px tall`);
  await page.click('h1', { position: { x: 1, y: 1 }, trial: true });
  await page.keyboard.press('PageDown');
  await page.keyboard.press('PageDown');
  await page.waitForFunction(() => document.querySelector('.app').dataset.ab === 'true', null, { timeout: 2000 }); // step 2 opens the A/B view
  await page.waitForFunction(() => document.querySelectorAll('canvas.diagram').length === 2);
  // Once both runs stand at the step's time point (while they run to it, Play reads
  // "Stop · to t = …", a longer label).
  await page.waitForFunction(() => ['live', 'live-b'].every((id) => document.querySelector(`[data-testid=${id}]`)?.dataset.catchingUp === 'false'), null, { timeout: 30000 });
  // The B menu joins the first line and the speed slider is shorter: still two lines.
  assert.ok((await barHeight()) < 95, `in presenter mode's A/B view the header is ${await barHeight()} px tall`);
  const boxes = await page.$$eval('canvas.diagram', (cs) => cs.map((c) => c.getBoundingClientRect()).map((r) => ({ top: r.top, bottom: r.bottom, h: r.height })));
  for (const b of boxes) {
    assert.ok(b.bottom <= 720 && b.h >= 200, `a diagram at ${b.top.toFixed(0)}-${b.bottom.toFixed(0)} px of 720`);
  }
  assert.equal(await page.evaluate(() => document.scrollingElement.scrollHeight <= innerHeight), true, 'the page does not scroll');
  await page.keyboard.press('Escape');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a link copied in the A/B view reopens the A/B view at the same time', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/scsi-starved?v=1&variant=regressed&seed=9&speed=1');
  await page.click('button.ab');
  await page.waitForFunction(() => document.querySelector('.interval')?.textContent.includes('second ending at 2'), null, { timeout: 20000 });
  await page.keyboard.press('Space');
  await page.waitForTimeout(200);
  await page.click('.copy-link');
  const url = await page.inputValue('.copied-url');
  assert.match(url, /variant=regressed&b=before&seed=9&t=[0-9.]+&speed=1$/);
  const want = await page.textContent('.counters');
  const { page: other, errors: otherErrors } = await open(ctx, url.slice(url.indexOf('#')));
  await other.waitForFunction(() => document.querySelector('[data-testid=live]')?.dataset.catchingUp === 'false');
  assert.equal(await other.getAttribute('.app', 'data-ab'), 'true', 'the link opens the A/B view');
  await other.waitForFunction((w) => document.querySelector('.counters')?.textContent === w, want, { timeout: 5000 });
  assert.deepEqual([...errors, ...otherErrors], []);
  await ctx.close();
});

test('back and forward walk through the states', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/nr-requests?v=1');
  await page.waitForSelector('canvas.diagram');
  await page.click('button.variant:has-text("workaround")');
  await page.click('button.variant:has-text("fixed")');
  await page.waitForFunction(() => document.querySelector('.app').dataset.variant === 'fixed' && location.hash.includes('variant=fixed'), null, { timeout: 2000 });
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('.app').dataset.variant === 'workaround');
  await page.goForward();
  await page.waitForFunction(() => document.querySelector('.app').dataset.variant === 'fixed');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('tampered links show a message naming the bad part, with no page error and nothing injected', async () => {
  const ctx = await h.browser.newContext();
  const cases = [
    ['#/lesson/scsi-starved?v=1&variant=%E0%A4%A', /variant/],
    ['#/lesson/scsi-starved?v=1&seed=-5', /seed/],
    ['#/lesson/scsi-starved?v=1&queue.depth=99999999999', /queue\.depth/],
    ['#/lesson/scsi-starved?v=1&' + 'x'.repeat(10000), /fragment/],
    ['#/lesson/scsi-starved?v=1&workload.rw=%3Cscript%3Ewindow.pwned%3D1%3C%2Fscript%3E', /workload\.rw/],
    ['#/lesson/scsi-starved?v=7', /version 7/],
    ['#/lesson/no-such-lesson?v=1', /lesson/],
  ];
  for (const [fragment, field] of cases) {
    const { page, errors } = await open(ctx, fragment);
    await page.waitForSelector('.notice');
    assert.match(await page.textContent('.notice'), field, fragment.slice(0, 80));
    assert.match(await page.textContent('.notice'), /showing|the rest of it is applied/);
    assert.equal(await page.evaluate(() => window.pwned), undefined);
    assert.equal(await page.evaluate(() => document.querySelectorAll('script').length), 1, 'an injected script element');
    assert.deepEqual(errors, [], fragment.slice(0, 80));
    // A link that could not be used at all is replaced in the address bar by what shows (the
    // lesson's defaults, or the first primer), so a reload or a copy of the address opens it.
    if (/showing/.test(await page.textContent('.notice'))) {
      await page.waitForFunction(() => /^#\/lesson\/(scsi-starved|anatomy-of-a-request)\?v=1&variant=[\w-]+&seed=1$/.test(location.hash), null, { timeout: 5000 })
        .catch(async () => assert.fail(`${fragment.slice(0, 80)}: the address stayed ${await page.evaluate(() => location.hash.slice(0, 120))}`));
      // The notice stays, also when the page shown is another lesson's (the router mounts it
      // afresh from the new address).
      await page.waitForTimeout(500);
      assert.match(await page.textContent('.notice'), field, `${fragment.slice(0, 80)}: the notice after the address changed`);
    }
    await page.close();
  }
  // A link wrong in one part keeps the others: a kernel engineer's typo in t does not lose
  // the variant and seed they sent.
  const { page, errors } = await open(ctx, '#/lesson/scsi-starved?v=1&variant=regressed&seed=7&t=3601');
  await page.waitForSelector('.notice');
  assert.match(await page.textContent('.notice'), /t: '3601' is not allowed.*the rest of it is applied/);
  assert.equal(await page.getAttribute('.app', 'data-variant'), 'regressed');
  assert.equal(await page.inputValue('.seed input'), '7');
  // The address bar shows the link as applied: a reload, or the address copied into a bug
  // thread, opens what shows, without the notice.
  await page.waitForFunction(() => location.hash === '#/lesson/scsi-starved?v=1&variant=regressed&seed=7');
  // So for a setting that acts on nothing in this stack (md's chunk, without an md device).
  const { page: idle, errors: idleErrors } = await open(ctx, '#/lesson/scsi-starved?v=1&variant=regressed&md.chunk_kb=64&seed=7&speed=0.5');
  await idle.waitForSelector('.notice');
  assert.match(await idle.textContent('.notice'), /md\.chunk_kb/);
  await idle.waitForFunction(() => location.hash === '#/lesson/scsi-starved?v=1&variant=regressed&seed=7&speed=0.5');
  // Wrong in several parts: one item each under one line, not one run of nested brackets.
  const { page: many, errors: manyErrors } = await open(ctx, '#/lesson/scsi-starved?v=1&variant=regressed&bogus=1&md.chunk_kb=64&t=3601');
  await many.waitForSelector('.notice li');
  assert.equal(await many.textContent('.notice p'), 'Parts of the link could not be used; the rest of it is applied:');
  const items = await many.locator('.notice li').allTextContents();
  assert.equal(items.length, 3, items.join(' | '));
  assert.match(items.join(' | '), /^bogus: not a link parameter.* \| t: '3601' is not allowed.* \| md\.chunk_kb=64: changes nothing here/);
  assert.equal(await many.getAttribute('.app', 'data-variant'), 'regressed');
  // Read, it closes: on a projector it takes rows the diagram needs.
  await many.click('.notice-close');
  await many.waitForFunction(() => !document.querySelector('.notice'), null, { timeout: 2000 });
  assert.deepEqual([...errors, ...idleErrors, ...manyErrors], []);
  await ctx.close();
});

test('the sandbox takes a fio job file and saves it in the link', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/sandbox?v=1');
  await page.waitForSelector('textarea');
  // One variant ("custom"): A/B compares two setups instead (B a copy of A, with knobs of its own).
  assert.equal(await page.isDisabled('button.ab'), false);
  assert.match(await page.getAttribute('button.ab', 'title'), /two setups/);
  // The box shows the running workload as a job file; editing it does nothing until applied.
  assert.match(await page.inputValue('textarea'), /\[[\w.-]+\][\s\S]*\nrw=\w+\nbs=/);
  assert.equal(await page.isDisabled('[data-testid=apply-fio]'), true);
  await page.fill('textarea', '[global]\nioengine=libaio\ndirect=1\n[randread]\nrw=randread\nbs=4k\niodepth=8\nnumjobs=3\nruntime=30\n');
  await page.locator('textarea').blur();
  assert.match(await page.textContent('.fio-actions'), /not applied yet/);
  await page.click('[data-testid=apply-fio]');
  await page.waitForSelector('.sandbox .knob-msg');
  assert.match(await page.textContent('.sandbox .knob-msg'), /applied the job \(8 settings from the file/);
  assert.match(await page.getAttribute('canvas.diagram', 'aria-label'), /3 processes/);
  assert.match(page.url(), /#\/sandbox\?v=1&.*workload\.rw=randread/);
  // The link's job comes back in the box, as a job file.
  const { page: again, errors: againErrors } = await open(ctx, new URL(page.url()).hash);
  await again.waitForSelector('textarea');
  assert.match(await again.inputValue('textarea'), /rw=randread\nbs=4k\nnumjobs=3\nioengine=libaio\niodepth=8/);
  await again.close();
  // Ctrl+Enter applies too; an option the model lacks is named, and the rest applies.
  await page.fill('textarea', '[a]\nverify=md5\nrw=randwrite\n');
  await page.press('textarea', 'Control+Enter');
  await page.waitForFunction(() => document.querySelector('.sandbox .knob-msg').textContent.includes('not modelled: verify=md5'));
  assert.match(page.url(), /workload\.rw=randwrite/);
  assert.deepEqual([...errors, ...againErrors], []);
  await ctx.close();
});

test('stacked lessons draw their layer: 80 dm devices over 80 disks, md0 over 8, with the stacking devices in iostat', async () => {
  const ctx = await h.browser.newContext();
  for (const [id, label, device] of [['dm-sg-lists', /80 stacking device\(s\), 80 disk\(s\)/, 'dm-'], ['raid5-chunk', /1 stacking device\(s\), 8 disk\(s\)/, 'md0']]) {
    const { page, errors } = await open(ctx, `#/lesson/${id}?v=1&speed=0.05`);
    await page.waitForSelector('canvas.diagram');
    assert.match(await page.getAttribute('canvas.diagram', 'aria-label'), label, id);
    // Skip ahead so iostat has a whole second; the layer's device is listed with the disks.
    await page.click('button:has-text("Skip 5 s")');
    await page.waitForFunction((d) => [...document.querySelectorAll('table td')].some((td) => td.textContent.trim().startsWith(d)), device, { timeout: 20000 });
    assert.deepEqual(errors, [], id);
    await page.close();
  }
  await ctx.close();
});

test('a student who opens a lesson cold finds its steps beside the diagram, and the A/B log says which run it lists', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/dm-sg-lists?v=1&b=workaround');
  await page.waitForSelector('canvas.diagram');
  const panel = page.getByRole('region', { name: 'Step' });
  const box = await panel.boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 900, 'the step panel is in view');
  assert.match(await panel.textContent(), /4 steps and a prediction/);
  await page.click('button[role=tab]:has-text("Event log")');
  assert.match(await page.textContent('[data-testid=log-run]'), /run A · regressed/);
  await panel.locator('button.step-next').click();
  assert.match(await page.textContent('[data-testid=step-bar]'), /1\/5\s*80 readers, one busy CPU/);
  assert.match(await page.textContent('[data-testid=step-watch]'), /ksoftirqd\/4/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('Back after opening A/B closes B and keeps run A where it was', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/scsi-starved?v=1&speed=0.2');
  await page.waitForFunction(() => /t = [0-9.]+ ms/.test(document.querySelector('[data-testid=live]')?.textContent || '') && !/t = 0\.000/.test(document.querySelector('[data-testid=live]').textContent), null, { timeout: 10000 });
  await page.click('button.ab');
  await page.waitForFunction(() => location.hash.includes('b='), null, { timeout: 5000 });
  await page.keyboard.press('Space');
  const events = async () => Number((await page.textContent('[data-testid=live]')).match(/events (\d+)/)[1]);
  const before = await events();
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('.app').dataset.ab === 'false', null, { timeout: 5000 });
  assert.ok(!(await page.evaluate(() => location.hash)).includes('b='));
  assert.ok((await events()) >= before, 'run A kept its events');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('A/B always compares two variants: B picks among the others, and A taking B\'s variant swaps them', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/scsi-starved?v=1&variant=before&b=regressed');
  await page.waitForSelector('.b-pick select');
  const options = async () => page.$$eval('.b-pick select option', (os) => os.map((o) => o.value));
  assert.deepEqual(await options(), ['regressed', 'fixed'], 'B offers the variants that are not A\'s');
  await page.click('button.variant:has-text("regressed")');
  await page.waitForFunction(() => location.hash.includes('variant=regressed'), null, { timeout: 5000 });
  assert.match(await page.evaluate(() => location.hash), /variant=regressed&b=before&/);
  assert.equal(await page.inputValue('.b-pick select'), 'before');
  assert.deepEqual(await options(), ['before', 'fixed']);
  // The address opens as it is, without a notice.
  const { page: again, errors: againErrors } = await open(ctx, await page.evaluate(() => location.hash));
  await again.waitForSelector('.b-pick select');
  assert.equal(await again.locator('.notice').count(), 0);
  assert.deepEqual([...errors, ...againErrors], []);
  await ctx.close();
});

test('a link past the end of a run that finishes opens at its end, not stuck replaying', async () => {
  const ctx = await h.browser.newContext();
  // nr-requests' workaround is done at about 5.3 s; the link asks for 10 s.
  const { page, errors } = await open(ctx, '#/lesson/nr-requests?v=1&variant=workaround&t=10');
  await page.waitForFunction(() => document.querySelector('[data-testid=live]')?.dataset.catchingUp === 'false', null, { timeout: 20000 });
  assert.match(await page.textContent('[data-testid=live]'), /all jobs done/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('the Fidelity page lists every regression lesson, and a lesson Status table shows the same numbers as the CLI', async () => {
  const board = JSON.parse(fs.readFileSync(path.join(root, 'lessons', 'fidelity.json'), 'utf8')).lessons;
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '');
  await page.waitForSelector('[data-testid=fidelity-link]');
  await page.click('[data-testid=fidelity-link]');
  await page.waitForSelector('.fidelity-page');
  const sections = await page.$$eval('.fidelity-lesson h2 a', (as) => as.map((a) => a.getAttribute('href')));
  for (const id of ['dm-sg-lists', 'raid5-chunk', 'mq-clone-stall', 'nr-requests', 'scsi-starved']) {
    assert.ok(sections.includes(`#/lesson/${id}?v=1`), `${id} missing from the Fidelity page`);
  }
  const sectionsBoard = JSON.parse(fs.readFileSync(path.join(root, 'lessons', 'fidelity.json'), 'utf8')).sections;
  const rowsOnPage = await page.$$eval('.fidelity-page tr.row-holds, .fidelity-page tr.row-misses', (trs) => trs.length);
  assert.equal(rowsOnPage, board.concat(sectionsBoard).reduce((n, l) => n + l.rows.length, 0));
  // A row that rests on a known simplification of the model carries its caveat, under it.
  // Its figures follow it, measured under the kernel's rule (caveat_runs), as the JSON has them.
  const figures = (r) => (r.caveat_runs ?? []).map((c) =>
    `with ${Object.entries(c.set).map(([k, v]) => `${k}=${v}`).join(' ')}: ${c.measured} ${r.unit}, ${c.holds ? 'inside' : 'outside'} ${r.band.lo}–${r.band.hi}`);
  const caveats = board.concat(sectionsBoard).flatMap((l) => l.rows).filter((r) => r.caveat)
    .map((r) => `caveat: ${r.caveat}` + (r.caveat_runs?.length ? ` (measured ${figures(r).join('; ')})` : ''));
  assert.ok(caveats.some((c) => c.includes('(measured with cpu.wake_idle=idle_cpu: ')), 'raid5-chunk\'s caveats carry their measured figures');
  assert.ok(caveats.length >= 1, 'the board has caveats (mq-clone-stall, raid5-chunk)');
  assert.deepEqual(await page.$$eval('.fidelity-page [data-testid=caveat]', (trs) => trs.map((tr) => tr.textContent.trim())), caveats);
  assert.ok(await page.$eval('.fidelity-page [data-testid=caveat]', (tr) => tr.previousElementSibling.matches('tr.row-holds, tr.row-misses, tr.why')));
  // The devices-and-layers section: its heading, every row with its verdict, and each row's
  // sandbox link (a ratio has two), which opens the sandbox.
  const devices = sectionsBoard.find((s) => s.lesson === 'devices');
  assert.ok(devices.rows.length >= 12);
  assert.equal((await page.textContent('[data-testid=fidelity-devices] h2')).trim(), devices.title);
  const deviceRows = await page.$$eval('[data-testid=fidelity-devices] tr.row-holds, [data-testid=fidelity-devices] tr.row-misses', (trs) =>
    trs.map((tr) => ({ name: tr.querySelector('td').firstChild.textContent.trim(), links: [...tr.querySelectorAll('a.sandbox-link')].map((a) => a.getAttribute('href')) })));
  assert.equal(deviceRows.length, devices.rows.length);
  devices.rows.forEach((r, i) => {
    assert.equal(deviceRows[i].name, r.name);
    assert.deepEqual(deviceRows[i].links, [r.link, r.link_over].filter(Boolean));
  });
  await page.click('[data-testid=fidelity-devices] a.sandbox-link');
  await page.waitForFunction(() => location.hash.startsWith('#/sandbox?v=1'));
  await page.goBack();
  await page.waitForSelector('.fidelity-page');
  await page.screenshot({ path: path.join(artifacts, 'fidelity-page.png'), fullPage: true });
  // A lesson's Status section: the committed rows, in order, with their verdicts and badge.
  const lesson = board.find((l) => l.lesson === 'nr-requests');
  await page.goto(h.base + '#/lesson/nr-requests?v=1');
  await page.click('[data-testid=text-gate] .gate-show');
  await page.waitForSelector('.lesson-text [data-testid=fidelity-table]');
  const cells = await page.$$eval('.lesson-text [data-testid=fidelity-table] tbody tr:not(.why)', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
  assert.equal(cells.length, lesson.rows.length);
  lesson.rows.forEach((r, i) => {
    assert.equal(cells[i][0], r.name);
    // The measured figure, as the CLI prints it (blksim's fmt_num), with its unit.
    const shown = parseFloat(cells[i][3].replace(/[^0-9.\-e]/g, ''));
    assert.ok(Math.abs(shown - r.measured) <= Math.abs(r.measured) * 0.01 + 0.01, `${r.name}: page ${cells[i][3]}, CLI ${r.measured}`);
    assert.match(cells[i][4], r.holds ? /holds|fitted/ : /misses/);
  });
  const badge = await page.textContent('.lesson-text [data-testid=fidelity-badge]');
  // The holding rows that rest on a simplification are counted beside the figure.
  const caveated = lesson.rows.filter((r) => r.holds && !r.fitted && r.caveat).length;
  const caveatNote = caveated === 0 ? '' : caveated === 1 ? ', 1 with a caveat' : `, ${caveated} with caveats`;
  assert.equal(badge.trim(), lesson.reproduced ? `reproduces its report${caveatNote.replace(' with', caveated === 1 ? ' figure with' : ' figures with')}` : `reproduces ${lesson.predicted_hold} of ${lesson.predicted_rows} figures${caveatNote}`);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('"?" opens the keyboard shortcuts sheet, listing every key; Escape and Close close it', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/anatomy-of-a-request?v=1&speed=0.05');
  await page.waitForSelector('canvas.diagram');
  assert.equal(await page.locator('[data-testid=shortcuts]').count(), 0);
  await page.keyboard.press('?');
  const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await sheet.waitFor();
  const text = await sheet.textContent();
  for (const key of ['Space', 'Shift+→', 'PageDown', 'P', 'Escape', '?']) assert.ok(text.includes(key), `${key} missing from the sheet`);
  // The keyboard's focus goes into the sheet, and back to the "?" button when it closes.
  await page.waitForFunction(() => document.activeElement?.classList.contains('shortcuts-close'));
  // Escape closes the sheet and leaves presenter mode alone.
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('[data-testid=shortcuts]').count(), 0);
  await page.waitForFunction(() => document.activeElement?.classList.contains('shortcuts-button'));
  assert.equal(await page.getAttribute('.app', 'data-presenter'), 'false');
  // The button beside the display toggles opens it too, and Close closes it.
  await page.click('.shortcuts-button');
  await sheet.waitFor();
  await page.screenshot({ path: path.join(artifacts, 'shortcuts.png') });
  await page.click('.shortcuts-close');
  assert.equal(await page.locator('[data-testid=shortcuts]').count(), 0);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('with reduced motion the run starts paused and the Motion toggle overrides the system setting', async () => {
  const ctx = await h.browser.newContext({ reducedMotion: 'reduce' });
  const { page, errors } = await open(ctx, '#/lesson/anatomy-of-a-request?v=1&speed=0.05');
  await page.waitForSelector('canvas.diagram');
  // The pause reaches the runs' worker and comes back within a frame or two.
  await page.waitForFunction(() => document.querySelector('.app').dataset.playing === 'false', null, { timeout: 2000 }); // reduced motion: no autoplay
  const toggle = page.locator('.motion-toggle');
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
  await page.click('.motion-toggle');
  assert.equal(await page.getAttribute('.app', 'data-motion'), 'full');
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  // The choice lasts for the tab: a reload keeps it.
  await page.reload();
  await page.waitForSelector('canvas.diagram');
  assert.equal(await page.getAttribute('.app', 'data-motion'), 'full');
  await page.click('.motion-toggle');
  assert.equal(await page.getAttribute('.app', 'data-motion'), 'reduced');
  // Paused, one step at a time: the requests are drawn where they are.
  for (let i = 0; i < 40; i++) await page.keyboard.press('ArrowRight');
  await page.locator('canvas.diagram').first().screenshot({ path: path.join(artifacts, 'reduced-motion.png') });
  assert.deepEqual(errors, []);
  await ctx.close();
  // Without the system setting the run plays at once, as before.
  const ctx2 = await h.browser.newContext();
  const p2 = await open(ctx2, '#/lesson/anatomy-of-a-request?v=1&speed=0.05');
  await p2.page.waitForSelector('canvas.diagram');
  assert.equal(await p2.page.getAttribute('.app', 'data-playing'), 'true');
  await ctx2.close();
});

test('on a 2x screen (a laptop panel, a phone) the charts are drawn in its device pixels, not stretched, and export so', async () => {
  // Light: the ink count below takes a dark pixel on the light background as drawn.
  const ctx = await h.browser.newContext({ deviceScaleFactor: 2, colorScheme: 'light' });
  const { page, errors } = await openPage(h, ctx, '#/lesson/scsi-starved?v=1&t=3', { width: 1280, height: 800 });
  await page.waitForFunction(() => document.querySelector('.interval')?.textContent.includes('second ending'), null, { timeout: 30000 });
  const drawn = () => page.$$eval('canvas.chart, canvas.latency', (cs) => cs.map((c) => {
    // The bitmap's bottom-right quarter: a chart drawn in CSS pixels on an unscaled bitmap of
    // twice their number leaves it blank (its axes, labels and lines all in the top-left one).
    const [w, h] = [c.width, c.height];
    const px = c.getContext('2d').getImageData(Math.floor(w * 0.5), Math.floor(h * 0.5), Math.floor(w * 0.5), Math.floor(h * 0.5)).data;
    let ink = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && (px[i] < 200 || px[i + 1] < 200 || px[i + 2] < 200)) ink++;
    return { cls: c.className, w, h, cw: c.clientWidth, ch: c.clientHeight, ink };
  }));
  await page.waitForFunction(() => [...document.querySelectorAll('canvas.chart, canvas.latency')].every((c) => c.clientWidth > 0 && c.width === 2 * Math.max(200, c.clientWidth)), null, { timeout: 5000 })
    .catch(async () => assert.fail(`canvases [bitmap, box]: ${JSON.stringify(await drawn())}`));
  for (const c of await drawn()) {
    assert.equal(c.h, 2 * c.ch, `${c.cls}: ${c.h} px bitmap for a ${c.ch} px box`);
    assert.ok(c.ink > 100, `${c.cls}: ${c.ink} drawn pixels in the bitmap's bottom-right quarter`);
  }
  // The PNG is the bitmap, with its caption band at the same scale (12 px text, 2x).
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('text=Export PNG')]);
  const bytes = fs.readFileSync(await png.path());
  const [w, hImg] = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
  const [cw, ch] = await page.$eval('canvas.chart', (c) => [c.width, c.height]);
  assert.equal(w, cw);
  assert.ok(hImg >= ch + 2 * 2 * 16, `image ${hImg} px tall, the chart ${ch}: a caption band of two 32 px lines at least`);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('leaving presenter mode while paused draws the charts again at their size (they were drawn hidden in it)', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await openPage(h, ctx, '#/lesson/nr-requests?v=1', { width: 1280, height: 720 });
  await page.waitForSelector('canvas.diagram');
  const sized = () => page.$$eval('canvas.chart, canvas.latency', (cs) => cs.map((c) => [c.width, c.clientWidth]));
  await page.click('.presenter-toggle');
  assert.equal(await page.getAttribute('.app', 'data-presenter'), 'true');
  // New seconds while the charts are hidden: they are drawn then, at no width.
  await page.getByRole('button', { name: /^Skip/ }).first().click();
  await page.waitForFunction(() => /^t = [5-9]\.\d+ s/.test(document.querySelector('[data-testid=live]')?.textContent || ''), null, { timeout: 60000 });
  await page.getByRole('button', { name: /Pause/ }).first().click();
  await page.click('.presenter-toggle');
  assert.equal(await page.getAttribute('.app', 'data-presenter'), 'false');
  // Paused: no new second would redraw them.
  await page.waitForFunction(() => [...document.querySelectorAll('canvas.chart, canvas.latency')].every((c) => c.clientWidth > 0 && c.width === Math.round(Math.max(200, c.clientWidth) * Math.min(2, Math.max(1, devicePixelRatio)))), null, { timeout: 5000 })
    .catch(async () => assert.fail(`canvas widths [drawn, shown]: ${JSON.stringify(await sized())}`));
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('the page names the run\'s kernel and, opened, the era rules it follows; a link\'s kernel= sets it; presenter mode leaves it to the step text', async () => {
  const ctx = await h.browser.newContext();
  const { page, errors } = await open(ctx, '#/lesson/raid5-chunk?v=1');
  await page.waitForSelector('canvas.diagram');
  const era = page.locator('[data-testid=era]');
  assert.equal((await era.locator('summary').textContent()).trim(), 'kernel 2.6.20');
  await era.locator('summary').click();
  const rules = await era.locator('li').allTextContents();
  assert.ok(rules.length >= 5, `the rules it lists: ${rules.join(', ')}`);
  assert.ok(rules.some((r) => /^queue\.plugging = /.test(r)), `queue.plugging among ${rules.join(', ')}`);
  // The sandbox: no kernel until the link sets one, and then its rules.
  const { page: sb, errors: sbErrors } = await open(ctx, '#/sandbox?v=1');
  await sb.waitForSelector('canvas.diagram');
  assert.equal((await sb.locator('[data-testid=era] summary').textContent()).trim(), 'kernel: not set');
  const { page: k, errors: kErrors } = await open(ctx, '#/sandbox?v=1&kernel=2.6.32');
  await k.waitForSelector('canvas.diagram');
  assert.equal((await k.locator('[data-testid=era] summary').textContent()).trim(), 'kernel 2.6.32');
  // In presenter mode the line gives its height to the diagrams and tables.
  await page.click('.presenter-toggle');
  await page.waitForFunction(() => document.querySelector('.app').dataset.presenter === 'true');
  assert.equal(await era.isVisible(), false);
  assert.deepEqual([...errors, ...sbErrors, ...kErrors], []);
  await ctx.close();
});
