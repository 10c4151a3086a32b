import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/** Held while a build runs: one build of dist/ at a time across processes (node_modules is never committed). */
const lockDir = join(engine, 'node_modules', '.sagaflow-build-lock');
/** A lock older than this was left by a build that died: the next build takes it over. */
const staleLockMs = 10 * 60_000;

/**
 * Runs `fn` holding the engine's build lock: a directory, made atomically by the first process that
 * asks. A build removes dist/ before it compiles, so a second build beside it (the console's build,
 * which compiles the engine first, and a test that needs dist/) would remove what the first one wrote,
 * and a reader between the two would find no build.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function withBuildLock(fn) {
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let age;
      try {
        age = Date.now() - statSync(lockDir).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      if (age > staleLockMs) rmSync(lockDir, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/**
 * Builds the engine to dist/ (the package's own `build`: tsc, as `pnpm pack` ships it) unless the
 * last build was of the same sources, one build at a time across processes. The bench measures this
 * build, as a host runs it (ADR 0064); the control plane's build compiles against it.
 * Resolves to an exit code.
 * @returns {Promise<number>}
 */
export async function buildEngine({ force = false } = {}) {
  return withBuildLock(async () => {
    const hash = engineSourceHash();
    if (!force && engineBuildIsCurrent(hash)) return 0;
    console.error('[sagaflow] building the engine (packages/engine/dist)');
    const code = await run(process.execPath, [join(root, 'scripts', 'pack-engine-assets.mjs'), 'build'], {
      cwd: root,
    });
    if (code === 0) writeFileSync(stamp, hash);
    return code;
  });
}
