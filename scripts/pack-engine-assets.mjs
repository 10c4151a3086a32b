// `prepack` of @sagaflow/engine: copy the SQL migrations (prisma/migrations, the single source) into
// the package, and check the generated Prisma client is there, so an installed engine can migrate
// and run on its own. The copy is ignored by git; `postpack` removes it.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './lib/ensure-pnpm.mjs';

const engine = join(root, 'packages', 'engine');
const target = join(engine, 'migrations');
if (process.argv[2] === 'clean') {
  rmSync(target, { recursive: true, force: true });
} else {
  rmSync(target, { recursive: true, force: true });
  cpSync(join(root, 'prisma', 'migrations'), target, { recursive: true });
  if (!existsSync(join(engine, 'src', 'generated', 'prisma', 'client.ts'))) {
    console.error('[sagaflow] the Prisma client is not generated: run `npm run generate` before packing the engine');
    process.exit(1);
  }
}
