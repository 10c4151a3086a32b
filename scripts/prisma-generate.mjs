// `prisma generate` without the native schema engine: Prisma 7 with driver adapters needs none to
// generate, but the CLI insists on finding one, so point it at any existing file.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root } from './lib/ensure-pnpm.mjs';

const prisma = join(root, 'packages', 'engine', 'node_modules', '.bin', 'prisma');
const r = spawnSync(prisma, ['generate', '--schema', join(root, 'prisma', 'schema.prisma')], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? '/bin/false',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});
process.exit(r.status ?? 1);
