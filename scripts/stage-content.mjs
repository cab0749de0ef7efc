// Trunk's post_build hook (Trunk.toml): copies the files build.rs wrote into its OUT_DIR's
// content/ folder (each lesson's text, the sandbox's text, the scoreboard whole and per lesson,
// and index.json, which names them for the service worker to precache) into the app's
// content/ folder. build.rs writes into cargo's OUT_DIR, which Trunk does not see, and the hook
// runs once cargo is done, so it copies the files of the build that just ran.
//
// Which OUT_DIR: build.rs leaves beside its content/ the checkout it read (content-source.txt);
// of those of this checkout under cargo's target directory, the newest. Every one whose build
// script ran for this checkout's current sources holds the same files.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const source = fs.realpathSync(process.env.TRUNK_SOURCE_DIR || process.cwd());
const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error('stage-content: TRUNK_STAGING_DIR is not set (run by trunk build, as Trunk.toml says)');
  process.exit(1);
}
const meta = JSON.parse(execFileSync('cargo', ['metadata', '--no-deps', '--format-version', '1'], { cwd: source, encoding: 'utf8' }));
const target = meta.target_directory;

const real = (p) => {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
};

// target/<triple>/<profile>/build/blkviz-<hash>/out and target/<profile>/build/blkviz-<hash>/out.
const found = [];
const look = (dir, depth) => {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const p = path.join(dir, e.name);
    if (e.name === 'build') {
      for (const b of fs.readdirSync(p)) {
        if (!b.startsWith('blkviz-')) continue;
        const out = path.join(p, b, 'out');
        const mark = path.join(out, 'content-source.txt');
        if (fs.existsSync(mark) && real(fs.readFileSync(mark, 'utf8')) === source && fs.existsSync(path.join(out, 'content', 'index.json'))) {
          found.push({ dir: path.join(out, 'content'), at: fs.statSync(path.join(out, 'content', 'index.json')).mtimeMs });
        }
      }
    } else if (depth > 0) {
      look(p, depth - 1);
    }
  }
};
look(target, 2);
if (found.length === 0) {
  console.error(`stage-content: no content/ from build.rs for ${source} under ${target}`);
  process.exit(1);
}
found.sort((a, b) => b.at - a.at);
const from = found[0].dir;
const to = path.join(staging, 'content');
fs.rmSync(to, { recursive: true, force: true });
fs.cpSync(from, to, { recursive: true });
const { files } = JSON.parse(fs.readFileSync(path.join(to, 'index.json'), 'utf8'));
console.log(`stage-content: ${files.length} files from ${from}`);
