import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import '../provided-context.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const control = join(root, 'apps', 'control');
const scratch = join(control, '.scratch');
/** A build this old was left by a run that was killed before its teardown (a whole run takes under an hour). */
const staleMs = 6 * 60 * 60_000;

function reapStaleBuilds(): void {
  for (const name of readdirSync(scratch)) {
    if (!name.startsWith('cli-build-')) continue;
    const dir = join(scratch, name);
    try {
      if (Date.now() - statSync(dir).mtimeMs > staleMs) rmSync(dir, { recursive: true, force: true });
    } catch {
      // Deleted meanwhile by its own run.
    }
  }
}

/**
 * The control plane's sources compiled once per run, as its build compiles them (tsconfig.build.json)
 * but without the type check (`--noCheck`: the typecheck step does that; with isolatedModules and
 * verbatimModuleSyntax the emitted JavaScript does not depend on it), for the operator CLI the tests run
 * over HTTP (support/run-cli.ts). Under tsx each such CLI process spent ~0.4 s more CPU than from the
 * compiled files (~0.65 s against ~0.2 s on these machines), most of it in tsx's loader thread; the
 * suite runs a few hundred. A fresh directory every run: it is never older than the sources.
 * In `.scratch/` (ignored by git, ESLint and Prettier), deleted when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  mkdirSync(scratch, { recursive: true });
  reapStaleBuilds();
  const outDir = mkdtempSync(join(scratch, 'cli-build-'));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await promisify(execFile)(
      process.execPath,
      [tsc, '-p', join(control, 'tsconfig.build.json'), '--noCheck', '--outDir', outDir],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (err) {
    rmSync(outDir, { recursive: true, force: true });
    const out = (err as { stdout?: string }).stdout ?? '';
    throw new Error(`compiling the control plane for the CLI tests failed:\n${out || String(err)}`, { cause: err });
  }
  project.provide('controlCliBuild', outDir);
  return () => rmSync(outDir, { recursive: true, force: true });
}
