import type { Database } from '../../src/db/database.ts';
import { insertStartedRun } from '../../src/store/insert-started-run.ts';

/** A run of `flowName` written active, leased to `workerId`, as a start handed to that worker leaves it: its id. */
export async function activeRun(db: Database, flowName: string, workerId: string): Promise<string> {
  const { runId } = await insertStartedRun(db.prisma, {
    flowName,
    flowVersion: 1,
    input: null,
    businessKey: null,
    tags: [],
    expiresAt: null,
    runTimeoutAt: null,
    now: new Date(),
    lease: { workerId, leaseSeconds: 60 },
  });
  return runId;
}
