import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createProcessManager } from '../../../src/index.ts';
import { spawnWorker } from '../../support/spawn-worker.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { tallyProcess, tracesOf } from './support/tally-process.ts';

/**
 * Review 54: a timeout-sweeping process SIGKILLed after it claimed a due timeout and locked its
 * instance (a real child process, stopped inside its delivery transaction by a fault hook). While it
 * holds the claim, another sweeper must not fire the timeout; once it is dead, the timeout must fire
 * exactly once within a bound.
 */
const script = fileURLToPath(new URL('./support/sweeper-frozen-after-claim.ts', import.meta.url));

describe('review 54: a timeout sweeper killed after its claim (real PostgreSQL, real child process)', () => {
  let db: Database & { url?: string };
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 4 });
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await db?.close();
  });

  it('a due timeout whose sweeper was SIGKILLed after claiming it fires exactly once, by another sweeper', async () => {
    const pm = createProcessManager({ db, processes: [tallyProcess], logger: pino({ level: 'silent' }) });
    const key = 'r54-killed-sweeper';
    const { instanceId } = await pm.deliver(tallyProcess, { id: `${key}-begin`, type: 'Begin', payload: { key } });
    const timeoutId = await waitFor('the Nudge to be due', async () => {
      const r = await db.pool!.query<{ id: string }>(
        `select id::text from "sagaflow"."process_timeouts" where instance_id = $1 and due_at <= now()`,
        [instanceId],
      );
      return r.rows[0]?.id;
    });
    const sweeper = await spawnWorker(script, db.url!, (p) => (child = p));
    const locked = await sweeper.printed(/^locked (\S+)$/m);
    expect(locked[1]).toBe(timeoutId);
    // While the child holds its claim, another sweeper does not fire it.
    const meanwhile = await pm.sweepProcessTimeouts();
    expect(meanwhile.delivered).toBe(0);

    expect(await sweeper.kill()).toBe('SIGKILL');
    const started = Date.now();
    await waitFor(
      'the timeout fired by the surviving sweeper',
      async () => ((await pm.sweepProcessTimeouts()).delivered > 0 ? true : undefined),
      10_000,
    );
    const took = Date.now() - started;
    // Nothing more to fire.
    expect((await pm.sweepProcessTimeouts()).delivered).toBe(0);
    const view = await pm.find(instanceId!);
    expect({
      nudges: (view?.state as { nudges: number } | null)?.nudges,
      failingTimeout: view?.failingTimeout ?? null,
    }).toEqual({
      nudges: 1,
      failingTimeout: null,
    });
    expect(await tracesOf(db, [timeoutId])).toEqual([{ message_id: timeoutId, applied: 1, inbox: 1, outbox: 1 }]);
    expect(took).toBeLessThan(10_000);
  });
});
