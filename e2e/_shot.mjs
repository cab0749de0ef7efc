import { launch } from './browser.mjs';
import { serve } from './serve.mjs';
const server = await serve('/work/main/dist');
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const shots = JSON.parse(process.argv[2]);
for (const [frag, file, actions] of shots) {
  await page.goto(base + frag);
  await page.waitForTimeout(1500);
  for (const a of actions || []) { if (a.startsWith('wait:')) await page.waitForTimeout(+a.slice(5)); else await page.click(a); }
  await page.waitForTimeout(1000);
  await page.screenshot({ path: file });
}
await browser.close(); server.close();
