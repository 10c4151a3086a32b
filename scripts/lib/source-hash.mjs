import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Folders that are installed or built, never sources. */
const skippedDirs = new Set(['node_modules', '.next']);

/**
 * Files a build or a typecheck writes into the source tree: `next build` writes next-env.d.ts after
 * the hash was taken, so counting it made the first restart after a fresh clone rebuild for nothing.
 */
const isGenerated = (name) => name === 'next-env.d.ts' || name.endsWith('.tsbuildinfo');

/**
 * A hash of the contents of `dirs` (walked in name order) and of `files`, by their paths relative
 * to `base`, so the same sources hash the same wherever the checkout is. Installed and generated
 * files are left out.
 */
export function sourceHash(base, dirs, files = []) {
  const h = createHash('sha256');
  const add = (p) => h.update(relative(base, p)).update('\0').update(readFileSync(p)).update('\0');
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        if (!skippedDirs.has(name)) walk(p);
      } else if (!isGenerated(name)) add(p);
    }
  };
  for (const dir of dirs) walk(dir);
  for (const file of files) add(file);
  return h.digest('hex');
}
