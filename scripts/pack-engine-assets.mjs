// `prepack` of @sagaflow/engine: build the package (ESM JavaScript, .d.ts and source maps in dist/,
// the generated Prisma client compiled with it) and copy the SQL migrations (prisma/migrations, the
// single source) into it, so an installed engine migrates and runs with nothing generated at the
// host's install. The migrations copy is ignored by git; `postpack` removes it. With `build`, it
// only builds (the engine's `build` script).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './lib/ensure-pnpm.mjs';

const engine = join(root, 'packages', 'engine');
const target = join(engine, 'migrations');
if (process.argv[2] === 'clean') {
  rmSync(target, { recursive: true, force: true });
} else {
  if (!existsSync(join(engine, 'src', 'generated', 'prisma', 'client.ts'))) {
    console.error('[sagaflow] the Prisma client is not generated: run `npm run generate` before packing the engine');
    process.exit(1);
  }
  // A fresh build: a file left from an older build must not ship.
  rmSync(join(engine, 'dist'), { recursive: true, force: true });
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const built = spawnSync(process.execPath, [tsc, '-p', join(engine, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (built.status !== 0) {
    console.error('[sagaflow] the engine does not build; fix the errors above before packing it');
    process.exit(1);
  }
  // `build` alone leaves the migrations where they are: inside the repository the engine reads prisma/migrations.
  if (process.argv[2] !== 'build') {
    rmSync(target, { recursive: true, force: true });
    cpSync(join(root, 'prisma', 'migrations'), target, { recursive: true });
  }
}
