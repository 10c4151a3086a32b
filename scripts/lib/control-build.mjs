import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './ensure-pnpm.mjs';
import { run } from './run.mjs';
import { buildEngine } from './engine-build.mjs';
import { sourceHash } from './source-hash.mjs';

const control = join(root, 'apps', 'control');
const engine = join(root, 'packages', 'engine');
const stamp = join(control, 'dist', 'sagaflow-source-hash');

/** The built control plane's entry: what `npm start` and the scale bench run (ADR 0044). */
export const controlEntry = join(control, 'dist', 'main.js');

/**
 * The control plane's V8 old-space cap (MB) unless `SAGAFLOW_CONTROL_MAX_OLD_SPACE_MB` says otherwise.
 * V8 grows the old generation to up to 4x its live size between full collections when the cap is
 * 2 GB or more (the default here is 4 GB) and to ~1.6x at 1 GB: the control plane holds ~35 MB
 * live, and the 4x headroom was most of its peak (ADR 0044). 1 GB is ~30x what it holds.
 */
const defaultMaxOldSpaceMb = 1024;

/**
 * Node's flags for the control plane, from `env`; throws naming the setting when it is not a size V8 can take.
 * @param {Record<string, string | undefined>} [env]
 * @returns {string[]}
 */
export function controlNodeFlags(env = process.env) {
  const text = env.SAGAFLOW_CONTROL_MAX_OLD_SPACE_MB ?? String(defaultMaxOldSpaceMb);
  const mb = Number(text);
  if (!/^\d+$/.test(text) || mb < 256 || mb > 65536)
    throw new Error(`SAGAFLOW_CONTROL_MAX_OLD_SPACE_MB must be a whole number of MB from 256 to 65536, got "${text}"`);
  return [`--max-old-space-size=${mb}`];
}

/**
 * The environment the control plane starts with beside the caller's: glibc's malloc arenas capped at 2
 * unless `MALLOC_ARENA_MAX` is set. V8 compiles Prisma's query compiler (WebAssembly) and hot
 * JavaScript on background threads; with one arena per thread, the memory those compilations free
 * stays resident in arenas nothing else allocates from (~50 MB, ADR 0044).
 * @param {Record<string, string | undefined>} [env]
 * @returns {Record<string, string>}
 */
export function controlProcessEnv(env = process.env) {
  return { MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? '2' };
}

/** Everything the built control plane is compiled from: its sources, the engine's (the generated client included), the compiler settings, the lockfile. */
const controlSourceHash = () =>
  sourceHash(
    root,
    [join(control, 'src'), join(engine, 'src')],
    [
      join(root, 'pnpm-lock.yaml'),
      join(root, 'tsconfig.base.json'),
      join(control, 'tsconfig.build.json'),
      join(engine, 'tsconfig.build.json'),
    ],
  );

/**
 * Compiles the engine (its own build, dist/) and the control plane (apps/control/dist/) to
 * JavaScript, unless the last build was of the same sources. The control plane runs from this
 * build in production: under tsx it carried a loader thread, esbuild's worker and every module's
 * transpiled source and source map (~60 MB of its resident set, ADR 0044). Resolves to an exit code.
 * @returns {Promise<number>}
 */
export async function buildControl({ force = false } = {}) {
  const hash = controlSourceHash();
  if (!force && existsSync(controlEntry) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) {
    console.error('[sagaflow] control plane build is up to date');
    return 0;
  }
  // The engine's build, unless dist/ already holds one of its sources as they are (one build at a time).
  const engineBuilt = await buildEngine();
  if (engineBuilt !== 0) return engineBuilt;
  // A fresh output: a module left from an older build must not be loaded.
  rmSync(join(control, 'dist'), { recursive: true, force: true });
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const code = await run(process.execPath, [tsc, '-p', join(control, 'tsconfig.build.json')], { cwd: root });
  if (code === 0) writeFileSync(stamp, hash);
  return code;
}
