import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { migrate } from '../../../src/db/migrate.ts';
import type { Database } from '../../../src/db/database.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { spawnWorker, type ChildWorker } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { migrationsBefore } from './support/before.ts';

const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));
const engineDir = join(repoRoot, 'packages/engine');
/** The last commit whose schema ends at 0029: the release before 0030 (ADR 0115) and 0031 (ADR 0119). */
const previousRelease = '9d99731^';

const act = (name: string) => defineAction({ name, run: async (i: { n: number }) => ({ did: name, n: i.n }) });
const a = act('r47-old-a');
const b = act('r47-old-b');
const flow = defineFlow({
  name: 'r47-old',
  version: 1,
  run: async (ctx) => {
    await ctx.action(a, { n: 1 });
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    await ctx.action(b, { n: 2 });
    return { ok: true };
  },
});

/** The worker of the previous release: its engine sources from git, its flow the same as `flow` above. */
const workerSource = `
import { pino } from 'pino';
import { createDatabase, createEngine, defineAction, defineFlow } from './src/index.ts';
const act = (name) => defineAction({ name, run: async (i) => ({ did: name, n: i.n }) });
const a = act('r47-old-a');
const b = act('r47-old-b');
const flow = defineFlow({ name: 'r47-old', version: 1, run: async (ctx) => {
  await ctx.action(a, { n: 1 });
  await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
  await ctx.action(b, { n: 2 });
  return { ok: true };
} });
const db = await createDatabase({ kind: 'postgres', url: process.argv[2], poolSize: 4 });
const engine = createEngine({ db, flows: [flow], actions: [a, b], logger: pino({ level: 'silent' }),
  config: { worker: { poll_interval_ms: 50 }, logging: { anomaly_level: null } } });
engine.startWorkers();
process.stdout.write('ready ' + engine.runtime.workerId + '\\n');
`;

/**
 * Review 47: a worker of the previous release (the engine at migration 0029, as a real child process
 * running that release's sources) keeps running while the current release's start-up migrates the same
 * PostgreSQL to 0031: runs it has in flight, and runs started after the upgrade, finish on it.
 */
describe('the previous release keeps working after the upgrade lands (real PostgreSQL, real processes)', () => {
  let db: Database & { url?: string };
  let before: string;
  /** The migrations through 0031: the upgrade this scenario is about, whatever later releases add. */
  let through0031: string;
  let oldDir: string;
  let worker: ChildWorker | undefined;
  let starter: Engine;
  beforeAll(async () => {
    const scratch = join(engineDir, '.scratch');
    mkdirSync(scratch, { recursive: true });
    oldDir = mkdtempSync(join(scratch, 'r47-previous-'));
    const tar = execFileSync('git', ['archive', previousRelease, 'packages/engine/src'], {
      cwd: repoRoot,
      maxBuffer: 1 << 28,
    });
    execFileSync('tar', ['-x', '--strip-components=2', '-C', oldDir], { input: tar });
    // The generated Prisma client is not in git; 0030 and 0031 add no column, so today's fits.
    cpSync(join(engineDir, 'src/generated'), join(oldDir, 'src/generated'), { recursive: true });
    writeFileSync(join(oldDir, 'worker.ts'), workerSource);
    db = await openTestDatabase({ migrated: false });
    before = migrationsBefore('0030_');
    through0031 = migrationsBefore('0032_');
    await migrate(db, { dir: before });
    starter = createEngine({
      db,
      flows: [flow],
      actions: [a, b],
      config: { logging: { anomaly_level: null } },
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await worker?.kill();
    await db.close();
    rmSync(before, { recursive: true, force: true });
    rmSync(through0031, { recursive: true, force: true });
    rmSync(oldDir, { recursive: true, force: true });
  });

  const status = async (runId: string) => (await starter.getRun(runId))?.run.status;
  const until = (runId: string, want: string) =>
    waitFor(`run ${runId} to be ${want}`, async () => ((await status(runId)) === want ? true : undefined), 60_000);

  it('held: runs in flight on the old worker, and runs started after 0030 and 0031 land, complete on it', async () => {
    worker = await spawnWorker(join(oldDir, 'worker.ts'), db.url!, undefined, [], 'sources');
    const inFlight = await Promise.all([1, 2, 3].map(() => starter.startFlow(flow, null)));
    for (const { runId } of inFlight) await until(runId, 'Waiting');

    const upgrade = await migrate(db, { dir: through0031 });
    expect(upgrade.applied).toEqual(['0030_updated_at_never_before_created_at', '0031_repair_approvals_by_target']);

    for (const { runId } of inFlight) await starter.signal(runId, 'go');
    const later = await starter.startFlow(flow, null);
    await until(later.runId, 'Waiting');
    await starter.signal(later.runId, 'go');
    for (const { runId } of [...inFlight, later]) await until(runId, 'Completed');
    const detail = await starter.getRun(later.runId);
    expect(detail?.actions.filter((s) => s.name.startsWith('r47-old')).map((s) => [s.name, s.status])).toEqual([
      ['r47-old-a', 'Completed'],
      ['r47-old-b', 'Completed'],
    ]);
  }, 180_000);
});
