// `npm run bench [-- flags]`: the benches (bench/README.md). Needs only Node 20, npm and the machine's
// PostgreSQL 15 binaries: like `npm start` and `npm test` it first installs the pinned pnpm and the
// dependencies and generates the Prisma client, so it also works on a fresh clone.
import { existsSync } from 'node:fs';
import { root } from './lib/ensure-pnpm.mjs';
import { prepare } from './lib/prepare.mjs';
import { run } from './lib/run.mjs';

if (!existsSync('/usr/lib/postgresql/15/bin/pgbench')) {
  console.error(
    '[sagaflow] PostgreSQL 15 binaries are missing (/usr/lib/postgresql/15/bin/pgbench): install them with ' +
      '`apt-get install -y postgresql` (the bench starts its own throwaway server and runs pgbench beside it).',
  );
  process.exit(1);
}
const { pnpm, env } = await prepare();
process.exit(
  await run(pnpm, ['--filter', '@sagaflow/bench', 'run', 'bench', ...process.argv.slice(2)], { cwd: root, env }),
);
