import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './ensure-pnpm.mjs';
import { run } from './run.mjs';
import { sourceHash } from './source-hash.mjs';

const engine = join(root, 'packages', 'engine');
/** Beside the build: which sources it was compiled from (a fresh `build` removes dist/, and it with it). */
const stamp = join(engine, 'dist', 'sagaflow-source-hash');

/** The built engine's entry: what a host that installed the package imports (its `default` export). */
const engineEntry = join(engine, 'dist', 'index.js');

/** Everything dist/ is compiled from: the engine's sources (the generated client included), the compiler settings, the lockfile. */
const engineSourceHash = () =>
  sourceHash(
    root,
    [join(engine, 'src')],
    [join(root, 'pnpm-lock.yaml'), join(root, 'tsconfig.base.json'), join(engine, 'tsconfig.build.json')],
  );

/** Whether dist/ holds a build of the engine's sources as they are now. */
function engineBuildIsCurrent(hash = engineSourceHash()) {
  return existsSync(engineEntry) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash;
}

/**
 * Builds the engine to dist/ (the package's own `build`: tsc, as `pnpm pack` ships it) unless the
 * last build was of the same sources. The bench measures this build, as a host runs it (ADR 0064).
 * Resolves to an exit code.
 * @returns {Promise<number>}
 */
export async function buildEngine({ force = false } = {}) {
  const hash = engineSourceHash();
  if (!force && engineBuildIsCurrent(hash)) return 0;
  console.error('[sagaflow] building the engine (packages/engine/dist)');
  const code = await run(process.execPath, [join(root, 'scripts', 'pack-engine-assets.mjs'), 'build'], { cwd: root });
  if (code === 0) writeFileSync(stamp, hash);
  return code;
}
