import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './ensure-pnpm.mjs';
import { run } from './run.mjs';

const web = join(root, 'apps', 'web');
const stamp = join(web, '.next', 'sagaflow-source-hash');

/** Hash of everything the web build depends on, so an unchanged console is not rebuilt. */
function sourceHash() {
  const h = createHash('sha256');
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === 'node_modules' || name === '.next') continue;
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else h.update(p).update(readFileSync(p));
    }
  };
  walk(web);
  walk(join(root, 'apps', 'control', 'src', 'api'));
  h.update(readFileSync(join(root, 'pnpm-lock.yaml')));
  return h.digest('hex');
}

/** Builds the console unless the last build was of the same sources. */
export async function buildWeb(pnpm, env, { force = false } = {}) {
  const hash = sourceHash();
  if (
    !force &&
    existsSync(join(web, '.next', 'BUILD_ID')) &&
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === hash
  ) {
    console.error('[sagaflow] console build is up to date');
    return 0;
  }
  const code = await run(pnpm, ['--filter', '@sagaflow/web', 'run', 'build'], { cwd: root, env });
  if (code === 0) writeFileSync(stamp, hash);
  return code;
}
