// blkviz's service worker: after one visit the app opens with no network (an instructor's
// laptop in a lecture hall), and links keep working, since they are URL fragments of the one
// page. Network first, so a new build is picked up as soon as the server answers; the cache
// answers when the network fails or takes longer than NETWORK_WAIT_MS to start answering.
// The app's files are fetched together at install, so the cache never holds a script from one
// build with the wasm of another.
const CACHE = 'blkviz-v1';
const APP_FILES = ['./', './index.html', './boot.js', './blkviz.js', './blkviz_bg.wasm', './sweep-worker.js', './sim-worker.js', './style.css', './favicon.svg', './manifest.webmanifest', './icon-192.png', './icon-512.png'];
// The trace page's reader, a wasm of its own that only the trace page loads.
APP_FILES.push('./trace-worker.js', './trace_worker.js', './trace_worker_bg.wasm');
// The sandbox's job-file reader, a wasm of its own that the page loads when a job file is applied.
APP_FILES.push('./job-worker.js', './job_worker.js', './job_worker_bg.wasm');
const NETWORK_WAIT_MS = 4000;
// The text the page fetches when it shows it (lessons, the sandbox's, the scoreboard): the
// build lists its files here, so a new lesson is precached with no list to edit.
const CONTENT_INDEX = './content/index.json';

self.addEventListener('install', (event) => {
  event.waitUntil(
    appFiles()
      .then((files) => caches.open(CACHE).then((c) => c.addAll(files.map((f) => new Request(f, { cache: 'reload' })))))
      .then(() => self.skipWaiting()),
  );
});

async function appFiles() {
  const index = await fetch(CONTENT_INDEX, { cache: 'reload' });
  if (!index.ok) throw new Error(`${CONTENT_INDEX}: HTTP ${index.status}`);
  const { files } = await index.json();
  return [...APP_FILES, CONTENT_INDEX, ...files.map((f) => `./${f}`)];
}

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin) return;
  event.respondWith(networkFirst(req));
});

async function networkFirst(req) {
  const cache = await caches.open(CACHE);
  // A page load with a query (?v=...) or a fragment is the same page.
  const cached = () => cache.match(req, { ignoreSearch: true }).then((r) => r || (req.mode === 'navigate' ? cache.match('./index.html') : undefined));
  const network = fetch(req, { cache: 'no-store' }).then((res) => {
    if (res.ok) cache.put(req, res.clone());
    return res;
  });
  const timeout = new Promise((resolve) => setTimeout(resolve, NETWORK_WAIT_MS));
  try {
    const first = await Promise.race([network, timeout]);
    if (first) return first;
    // The network is slow: the cache if it has the file, else keep waiting.
    return (await cached()) || (await network);
  } catch (e) {
    const r = await cached();
    if (r) return r;
    throw e;
  }
}
