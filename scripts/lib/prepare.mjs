import { join } from 'node:path';
import { ensurePnpm, root } from './ensure-pnpm.mjs';
import { run, step } from './run.mjs';

/** Pinned pnpm, dependencies from the lockfile, and the generated Prisma client. */
export async function prepare() {
  const pnpm = ensurePnpm();
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
  for (const s of [
    [
      'install dependencies (pnpm, frozen lockfile)',
      () => run(pnpm, ['install', '--frozen-lockfile', '--prefer-offline'], { cwd: root, env }),
    ],
    [
      'generate the Prisma client',
      () => run(process.execPath, [join(root, 'scripts', 'prisma-generate.mjs')], { cwd: root, env }),
    ],
  ]) {
    const r = await step(...s);
    if (!r.ok) {
      console.error(`[sagaflow] ${r.title} failed; fix the error above and run the command again.`);
      process.exit(1);
    }
  }
  return { pnpm, env };
}
