import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import '../provided-context.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const control = join(root, 'apps', 'control');
const engine = join(root, 'packages', 'engine');
const scratch = join(control, '.scratch');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
/** A build this old was left by a run that was killed before its teardown (a whole run takes under an hour). */
const staleMs = 6 * 60 * 60_000;

function reapStaleBuilds(): void {
  for (const name of readdirSync(scratch)) {
    if (!name.startsWith('test-build-') && !name.startsWith('cli-build-')) continue;
    const dir = join(scratch, name);
    try {
      if (Date.now() - statSync(dir).mtimeMs > staleMs) rmSync(dir, { recursive: true, force: true });
    } catch {
      // Deleted meanwhile by its own run.
    }
  }
}

async function compile(what: string, args: string[]): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, [tsc, ...args, '--noCheck'], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const out = (err as { stdout?: string }).stdout ?? '';
    throw new Error(`compiling ${what} for the tests failed:\n${out || String(err)}`, { cause: err });
  }
}

/**
 * The control plane and the engine compiled once per run, as their builds compile them (each package's
 * tsconfig.build.json) but without the type check (`--noCheck`: the typecheck step does that; with
 * isolatedModules and verbatimModuleSyntax the emitted JavaScript does not depend on it). The processes the
 * tests spawn (control planes, the operator CLI, the engine's child workers) run from it with plain node:
 * under tsx each paid ~0.4 s (a CLI) to ~1.5 s (a control plane or a worker) more CPU, most of it in tsx's
 * loader thread. The layout is the installed package's:
 *
 *     <build>/main.js, cli.js, …                   apps/control/src compiled (tsconfig.build.json)
 *     <build>/node_modules/@sagaflow/engine/
 *       package.json                               packages/engine's, as it is
 *       src/**.js, test/**.js                      packages/engine/src and its test scripts (not *.test.ts)
 *       dist -> src                                what package.json's exports name
 *       migrations -> prisma/migrations            so db/migrations-dir.ts takes the packaged path
 *       node_modules -> packages/engine/node_modules
 *
 * Bare `@sagaflow/engine` from `<build>/*.js` resolves to that copy first (the control plane's other
 * dependencies to apps/control/node_modules, up the tree); the engine's test scripts import `../src/…`,
 * the same files. Never `packages/engine/dist`: `installed-tarball.pg.test.ts`'s `npm pack` rebuilds it
 * while other files run. The engine's test scripts are compiled with it (rootDir packages/engine), so a
 * spawned worker keeps its place relative to the engine's sources.
 *
 * A fresh directory every run: it is never older than the sources; a file the tests ask for that it does
 * not hold is an error (support/compiled.ts, run-cli.ts). In `.scratch/` (ignored by git, ESLint and
 * Prettier). Both projects that spawn processes (postgres, engine-pglite) list this setup; in one run they
 * share one build (kept on `globalThis` of vitest's main process), deleted when the last of them ends.
 */
async function build(): Promise<string> {
  mkdirSync(scratch, { recursive: true });
  reapStaleBuilds();
  const dir = mkdtempSync(join(scratch, 'test-build-'));
  try {
    const pkg = join(dir, 'node_modules', '@sagaflow', 'engine');
    mkdirSync(pkg, { recursive: true });
    const engineConfig = join(dir, 'tsconfig.engine.json');
    writeFileSync(
      engineConfig,
      JSON.stringify({
        extends: join(engine, 'tsconfig.build.json'),
        compilerOptions: {
          rootDir: engine,
          outDir: pkg,
          declaration: false,
          declarationMap: false,
          sourceMap: false,
        },
        include: [join(engine, 'src'), join(engine, 'test')],
        exclude: [join(engine, '**', '*.test.ts')],
      }),
    );
    await Promise.all([
      compile('the control plane', ['-p', join(control, 'tsconfig.build.json'), '--outDir', dir]),
      compile('the engine', ['-p', engineConfig]),
    ]);
    copyFileSync(join(engine, 'package.json'), join(pkg, 'package.json'));
    symlinkSync('src', join(pkg, 'dist'));
    symlinkSync(join(root, 'prisma', 'migrations'), join(pkg, 'migrations'));
    symlinkSync(join(engine, 'node_modules'), join(pkg, 'node_modules'));
    for (const f of [join(dir, 'main.js'), join(dir, 'cli.js'), join(pkg, 'src', 'index.js')]) {
      if (!existsSync(f)) throw new Error(`the test build has no ${f}`);
    }
    return dir;
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

interface SharedBuild {
  users: number;
  dir: Promise<string>;
}
const shared = Symbol.for('sagaflow.testBuild');
const main = globalThis as { [shared]?: SharedBuild };

export default async function setup(project: TestProject): Promise<() => void> {
  const it = (main[shared] ??= { users: 0, dir: build() });
  it.users += 1;
  const release = (dir?: string) => {
    it.users -= 1;
    if (it.users > 0) return;
    if (main[shared] === it) delete main[shared];
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  let dir: string;
  try {
    dir = await it.dir;
  } catch (err) {
    release();
    throw err;
  }
  project.provide('testBuild', dir);
  return () => release(dir);
}
