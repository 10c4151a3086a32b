import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import '../provided-context.ts';

/** Where a control plane or CLI process the tests spawn runs from. */
export type ControlFrom = 'build' | 'sources';

/**
 * node's arguments that run the control plane's `main` or operator `cli`: from this run's build
 * (support/global-setup-test-build.ts; plain node, and `@sagaflow/engine` is the build's compiled copy, so
 * the process must run without the `@sagaflow/source` condition), or from the sources under tsx, as before.
 * A build without the file is an error, never a fallback.
 */
export function controlEntry(entry: 'main' | 'cli', from: ControlFrom): string[] {
  if (from === 'sources') return ['--conditions=@sagaflow/source', '--import', 'tsx', `apps/control/src/${entry}.ts`];
  return [compiledControlFile(entry)];
}

/** `<build>/<entry>.js`, checked. */
export function compiledControlFile(entry: 'main' | 'cli'): string {
  const js = join(inject('testBuild'), `${entry}.js`);
  if (!existsSync(js)) throw new Error(`the test build has no ${js}`);
  return js;
}

/**
 * Throws unless `env` names the control plane's database. The default data directory (env.ts) is relative
 * to the running file: from the build it would not be the repository's `.data/pglite`.
 */
export function assertNamesItsDatabase(env: Record<string, string | undefined>): void {
  if (!env.DATABASE_URL && !env.SAGAFLOW_DATA_DIR)
    throw new Error(
      'a compiled control plane needs DATABASE_URL or SAGAFLOW_DATA_DIR (the default is relative to its file)',
    );
}

/** NODE_OPTIONS without the `@sagaflow/source` condition (vitest.config.ts adds it), for a compiled process. */
export function withoutSourceCondition(nodeOptions = ''): string {
  return nodeOptions
    .split(/\s+/)
    .filter((o) => o !== '' && o !== '--conditions=@sagaflow/source')
    .join(' ');
}
