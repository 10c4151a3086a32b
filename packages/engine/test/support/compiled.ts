import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The engine (and the control plane) compiled once per run: apps/control/test/support/global-setup-test-build.ts. */
    testBuild: string;
  }
}

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const engineRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The compiled copy of one of the engine's child scripts (`script`: a `.ts` file under packages/engine,
 * absolute or relative to the repository's root), from this run's build. Throws when the build has none: a
 * child never runs something older or other than the sources.
 */
export function compiledEngineScript(script: string): string {
  const rel = relative(engineRoot, resolve(repoRoot, script));
  if (rel.startsWith('..') || !rel.endsWith('.ts')) throw new Error(`${script} is not a TypeScript file of the engine`);
  const js = join(inject('testBuild'), 'node_modules', '@sagaflow', 'engine', rel.replace(/\.ts$/, '.js'));
  if (!existsSync(js)) throw new Error(`the test build has no ${js} (compiled from ${script})`);
  return js;
}

/**
 * `env` for a process that runs compiled JavaScript: NODE_OPTIONS without the `@sagaflow/source` condition
 * (vitest.config.ts adds it for the sources), so `@sagaflow/engine` resolves as a host's would.
 */
export function compiledEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const nodeOptions = (env.NODE_OPTIONS ?? '')
    .split(/\s+/)
    .filter((o) => o !== '' && o !== '--conditions=@sagaflow/source')
    .join(' ');
  return { ...env, NODE_OPTIONS: nodeOptions };
}
