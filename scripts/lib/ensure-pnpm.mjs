import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const wanted = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
const local = join(root, '.tools', 'node_modules', '.bin', 'pnpm');

function versionOf(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Returns a path to pnpm at the version pinned in package.json, installing it locally if needed. */
export function ensurePnpm() {
  if (versionOf('pnpm') === wanted) return 'pnpm';
  if (existsSync(local) && versionOf(local) === wanted) return local;
  console.error(`[sagaflow] installing pnpm@${wanted} into .tools/ (one time)`);
  // --ignore-scripts: npm 11 warns about pnpm's install scripts (they only swap in its native binary);
  // without them pnpm runs through Node, which is all we need.
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      join(root, '.tools'),
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      `pnpm@${wanted}`,
    ],
    { stdio: 'inherit' },
  );
  if (versionOf(local) !== wanted) {
    throw new Error(`pnpm@${wanted} could not be installed into .tools/; install it with: npm i -g pnpm@${wanted}`);
  }
  return local;
}
