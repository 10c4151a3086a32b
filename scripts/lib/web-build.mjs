import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './ensure-pnpm.mjs';
import { run } from './run.mjs';
import { sourceHash } from './source-hash.mjs';

const web = join(root, 'apps', 'web');
const stamp = join(web, '.next', 'sagaflow-source-hash');

/** Everything the web build depends on: the console, the API types it imports, the lockfile. */
const webSourceHash = () =>
  sourceHash(root, [web, join(root, 'apps', 'control', 'src', 'api')], [join(root, 'pnpm-lock.yaml')]);

/**
 * Builds the console unless the last build was of the same sources. `runCommand` runs the build
 * (`run`'s signature, resolving to the exit code): `npm test` passes one that runs it at a lower
 * priority with its output held.
 */
export async function buildWeb(pnpm, env, { force = false, runCommand = run } = {}) {
  const hash = webSourceHash();
  if (
    !force &&
    existsSync(join(web, '.next', 'BUILD_ID')) &&
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === hash
  ) {
    console.error('[sagaflow] console build is up to date');
    return 0;
  }
  const code = await runCommand(pnpm, ['--filter', '@sagaflow/web', 'run', 'build'], { cwd: root, env });
  if (code === 0) writeFileSync(stamp, hash);
  return code;
}
