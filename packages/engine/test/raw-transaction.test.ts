import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { rawDb, type RawDb } from '../src/db/raw-db.ts';
import { TransactionExpired } from '../src/db/run-in-transaction.ts';
import { Prisma } from '../src/generated/prisma/client.ts';
import { writePendingOutcome } from '../src/runtime/steps/pending-outcome.ts';
import { acquireLock, releaseLock } from '../src/store/acquire-lock.ts';
import { appendFlowEvent } from '../src/store/append-flow-event.ts';
import { appendRunEnd } from '../src/store/append-run-end.ts';
import { cancelWaitingStep } from '../src/store/cancel-waiting-step.ts';
import { claimStep } from '../src/store/claim-step.ts';
import { consumeSignal } from '../src/store/consume-signal.ts';
import { deleteJob } from '../src/store/delete-job.ts';
import { enqueueJob } from '../src/store/enqueue-job.ts';
import { finishRun } from '../src/store/finish-run.ts';
import { fireTimer } from '../src/store/fire-timer.ts';
import { hasCancellation } from '../src/store/has-cancellation.ts';
import { insertCompensation } from '../src/store/insert-compensation.ts';
import { insertFlowRun } from '../src/store/insert-flow-run.ts';
import { insertSignal } from '../src/store/insert-signal.ts';
import { insertStartedRun } from '../src/store/insert-started-run.ts';
import { insertStep } from '../src/store/insert-step.ts';
import { insertTimer } from '../src/store/insert-timer.ts';
import { listActionRuns } from '../src/store/list-action-runs.ts';
import { listCompensationRuns } from '../src/store/list-compensation-runs.ts';
import { loadRunForReplay } from '../src/store/load-run-for-replay.ts';
import { lockOpenRun } from '../src/store/lock-open-run.ts';
import { markRunActive } from '../src/store/mark-run-active.ts';
import { parkRun } from '../src/store/park-run.ts';
import { settleParentStep } from '../src/store/settle-parent-step.ts';
import { settleWaitStep } from '../src/store/settle-wait-step.ts';
import { seedStep } from './support/seed-step.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

/** Thrown to roll a comparison's transaction back, so both clients meet the same rows. */
class RolledBack extends Error {}

/** Columns the database fills (a sequence, gen_random_uuid(), now()): only their type must match. */
const generated = new Set(['id', 'created_at', 'updated_at', 'available_at', 'at']);
const typeOf = (v: unknown) => (v === null ? 'null' : typeof v === 'object' ? v.constructor.name : typeof v);
function comparable(value: unknown, key = ''): unknown {
  if (generated.has(key)) return `<${typeOf(value)}>`;
  if (Array.isArray(value)) return value.map((v) => comparable(v));
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, comparable(v, k)]));
  return value;
}

const doubles = [0.48500823341430377, 0.14186903463910627];
const now = new Date('2026-12-01T12:00:00.123Z');

describe(`the raw run transaction returns what Prisma's raw path returns (${testDbKind()})`, () => {
  let db: Database;
  let runId: string;
  let stepId: string;
  let waitId: string;
  let childStepId: string;
  let jobId: bigint;

  const viaPrisma = async (work: (tx: RawDb) => Promise<unknown>) => {
    let result: unknown;
    await db.prisma
      .$transaction(async (tx) => {
        result = await work(tx);
        throw new RolledBack();
      })
      .catch((err: unknown) => {
        if (!(err instanceof RolledBack)) throw err;
      });
    return result;
  };
  const viaDriver = async (work: (tx: RawDb) => Promise<unknown>) => {
    let result: unknown;
    await db.driver
      .transaction(async (session) => {
        result = await work(rawDb((s) => session.raw(s)));
        throw new RolledBack();
      })
      .catch((err: unknown) => {
        if (!(err instanceof RolledBack)) throw err;
      });
    return result;
  };

  beforeAll(async () => {
    db = await openTestDatabase();
    ({ runId } = await insertStartedRun(db.prisma, {
      flowName: 'f',
      flowVersion: 1,
      input: { n: doubles[0] ?? 0 },
      businessKey: null,
      tags: ['a', 'b'],
      expiresAt: null,
      runTimeoutAt: new Date(now.getTime() + 3_600_000),
      now,
      lease: null,
    }));
    await markRunActive(db.prisma, { runId, status: 'Running', now });
    stepId = (await insertStep(db.prisma, { runId, sequence: 1, kind: 'action', name: 'a', input: { d: doubles } })).id;
    await insertStep(db.prisma, {
      runId,
      sequence: 2,
      kind: 'value',
      name: 'random',
      input: null,
      status: 'Completed',
      output: doubles[1] ?? 0,
    });
    waitId = (
      await insertStep(db.prisma, {
        runId,
        sequence: 3,
        kind: 'signal',
        name: 'go',
        input: { seconds: 60 },
        status: 'Waiting',
        wakeAt: new Date(now.getTime() + 60_000),
      })
    ).id;
    childStepId = (
      await insertStep(db.prisma, { runId, sequence: 4, kind: 'child', name: 'c', input: null, status: 'Waiting' })
    ).id;
    await insertCompensation(db.prisma, {
      runId,
      actionSequence: 1,
      level: 1,
      ordinal: 0,
      name: 'undo',
      input: { d: doubles[0] ?? 0 },
      maxAttempts: 3,
      reclaimAfterSeconds: 30,
      expiresAt: now,
    });
    await insertSignal(db.prisma, { runId, name: 'go', payload: { v: doubles[1] ?? 0 } });
    await insertTimer(db.prisma, { runId, sequence: 3, fireAt: now });
    await db.prisma.job.updateMany({ where: { run_id: runId }, data: { locked_by: 'w1' } });
    jobId = (await db.prisma.job.findFirstOrThrow({ where: { run_id: runId, locked_by: 'w1' } })).id;
  });
  afterAll(async () => {
    await db?.close();
  });

  const claimed = async (tx: RawDb) =>
    claimStep(tx, {
      table: 'action_runs',
      id: stepId,
      workerId: 'w1',
      now,
      event: { type: 'action.started', sequence: 1, data: { name: 'a' } },
    });
  const cases: [string, (tx: RawDb) => Promise<unknown>][] = [
    ['loadRunForReplay', (tx) => loadRunForReplay(tx, { runId, now, flows: ['f'] })],
    ['listActionRuns', (tx) => listActionRuns(tx, runId)],
    ['listCompensationRuns', (tx) => listCompensationRuns(tx, runId)],
    ['lockOpenRun', (tx) => lockOpenRun(tx, runId, 'update')],
    [
      'insertStep (new, then existing)',
      async (tx) => [
        await insertStep(tx, {
          runId,
          sequence: 9,
          kind: 'action',
          name: 'n',
          input: [doubles[0] ?? 0, 'x', null],
          maxAttempts: 5,
          parallelBlock: 2,
          reclaimAfterSeconds: 7,
          expiresAt: now,
        }),
        await insertStep(tx, { runId, sequence: 2, kind: 'value', name: 'random', input: null }),
      ],
    ],
    ['claimStep', claimed],
    [
      'claimStep then writePendingOutcome (recorded, then already)',
      async (tx) => {
        const attempts = (await claimed(tx)) ?? 0;
        const o = { table: 'action_runs' as const, runId, rowId: stepId, sequence: 1, name: 'a', attempts };
        const lock = { key: `step:action_runs:${stepId}`, owner: 'w1' };
        return [
          await acquireLock(tx, { ...lock, ttlSeconds: 30, now }),
          await writePendingOutcome(tx, { ...o, output: { d: doubles }, lock }, now),
          await writePendingOutcome(tx, { ...o, output: { d: doubles } }, now),
          await listActionRuns(tx, runId),
        ];
      },
    ],
    [
      'acquireLock, releaseLock',
      async (tx) => [
        await acquireLock(tx, { key: 'k', owner: 'o', ttlSeconds: 5, now }),
        await releaseLock(tx, { key: 'k', owner: 'o' }),
      ],
    ],
    ['hasCancellation', (tx) => hasCancellation(tx, runId)],
    ['markRunActive', (tx) => markRunActive(tx, { runId, status: 'Compensating', now })],
    [
      'parkRun',
      async (tx) => [
        await parkRun(tx, { runId, waitingFor: null, stuckReason: 'odd: why', expectedVersion: null, now }),
        await loadRunForReplay(tx, { runId, now, flows: [] }),
      ],
    ],
    [
      'finishRun, appendRunEnd with its acknowledgement',
      async (tx) => [
        await finishRun(tx, { id: runId, status: 'Completed', output: { d: doubles }, now }),
        await appendRunEnd(tx, {
          runId,
          type: 'run.completed',
          data: { d: doubles[0] ?? 0 },
          ack: { id: jobId, workerId: 'w1' },
        }),
        await tx.$queryRaw`select count(*) as jobs from "sagaflow"."jobs" where run_id = ${runId}::uuid`,
      ],
    ],
    [
      'enqueueJob, deleteJob',
      async (tx) => [
        await enqueueJob(tx, { kind: 'wake-run', runId, rowId: stepId, availableAt: now }),
        await deleteJob(tx, { id: jobId, workerId: 'w1' }),
        await tx.$queryRaw`select kind, run_id, row_id, available_at, locked_by, payload from "sagaflow"."jobs"
                            where run_id = ${runId}::uuid order by id`,
      ],
    ],
    ['appendFlowEvent', (tx) => appendFlowEvent(tx, { runId, type: 't', sequence: 1, rowId: stepId, data: { d: 1 } })],
    [
      'insertCompensation (new, then existing)',
      async (tx) => {
        const c = { runId, actionSequence: 1, name: 'undo', input: null, maxAttempts: 1, reclaimAfterSeconds: null };
        return [
          await insertCompensation(tx, { ...c, level: 2, ordinal: 0, expiresAt: null }),
          await insertCompensation(tx, { ...c, level: 1, ordinal: 0, expiresAt: null }),
        ];
      },
    ],
    [
      'consumeSignal, settleWaitStep, fireTimer',
      async (tx) => [
        await consumeSignal(tx, { runId, name: 'go', sequence: 3, now }),
        await settleWaitStep(tx, { id: waitId, status: 'Completed', output: { value: doubles[0] ?? 0 }, now }),
        await fireTimer(tx, { runId, sequence: 3, now }),
        await tx.$queryRaw`select status, fired_at from "sagaflow"."timers" where run_id = ${runId}::uuid`,
      ],
    ],
    ['cancelWaitingStep', (tx) => cancelWaitingStep(tx, { id: waitId, now })],
    [
      'insertFlowRun (a child), settleParentStep',
      async (tx) => {
        const child = await insertFlowRun(tx, {
          flowName: 'c',
          flowVersion: 2,
          input: { d: doubles },
          businessKey: null,
          tags: ['t'],
          expiresAt: null,
          runTimeoutAt: null,
          parent: { runId, sequence: 4, cancelPolicy: 'abandon' },
          now,
        });
        return [
          await tx.$queryRaw`select * from "sagaflow"."flow_runs" where id = ${child}::uuid`,
          await settleParentStep(tx, {
            parentRunId: runId,
            parentSequence: 4,
            childRunId: child,
            result: { status: 'Completed', output: { d: doubles } },
            now,
          }),
          await tx.$queryRaw`select status, output from "sagaflow"."action_runs" where id = ${childStepId}::uuid`,
        ];
      },
    ],
    [
      'every type the engine reads',
      (tx) => tx.$queryRaw`
        select 1::int4 as i4, 9007199254740993::int8 as i8, 1.25::numeric as num, 0.1::float8 as f8,
               true as b, 'x'::text as t, ${stepId}::uuid as u, ${now}::timestamptz as tz,
               '2026-01-02 03:04:05.678'::timestamp as ts, '{"d": 0.48500823341430377}'::jsonb as jb,
               '[1, 2.5]'::json as j, array[1, 2]::int8[] as i8s, array['a', null, 'c']::text[] as ts2,
               array[${stepId}::uuid] as us, array[${now}::timestamptz] as tzs, null::int8 as nothing,
               ${['p', 'q']}::text[] as param_array, ${9007199254740993n}::int8 as param_big`,
    ],
    [
      'a Date on a session whose TimeZone is not UTC (sent and read as Prisma does)',
      async (tx) => {
        await tx.$executeRaw`set local timezone to 'America/New_York'`;
        return tx.$queryRaw`select ${now}::timestamptz as tz, ${now}::timestamptz::text as shown,
                                   '2026-06-01 08:01:00-04'::timestamptz as stored`;
      },
    ],
    [
      '$executeRaw returns the row count',
      (tx) => tx.$executeRaw`update "sagaflow"."action_runs" set name = name where run_id = ${runId}::uuid`,
    ],
    [
      'a Prisma.Sql argument',
      (tx) => tx.$queryRaw(Prisma.sql`select ${Prisma.join([1, 2])} as ${Prisma.raw('"two"')}`),
    ],
  ];

  it.each(cases)('%s', async (_name, work) => {
    const prisma = await viaPrisma(work);
    const raw = await viaDriver(work);
    expect(comparable(raw)).toStrictEqual(comparable(prisma));
  });
});

describe(`the raw run transaction is all or nothing (${testDbKind()})`, () => {
  let db: Database;
  let runId: string;
  const events = async () => db.prisma.flowEvent.count({ where: { run_id: runId, type: { startsWith: 'probe.' } } });

  beforeAll(async () => {
    db = await openTestDatabase();
    ({ runId } = await seedStep(db));
  });
  afterAll(async () => {
    await db?.close();
  });

  it('a statement that fails rolls back everything the transaction wrote before it', async () => {
    await expect(
      db.driver.transaction(async (session) => {
        const tx = rawDb((s) => session.raw(s));
        await appendFlowEvent(tx, { runId, type: 'probe.before-error' });
        await tx.$executeRaw`insert into "sagaflow"."flow_events" (run_id, type) values (${runId}::uuid, null)`;
      }),
    ).rejects.toThrow(/null value|not-null/);
    expect(await events()).toBe(0);
    // The pool (or PGlite) is usable afterwards, and a transaction that succeeds commits.
    await db.driver.transaction((session) =>
      appendFlowEvent(
        rawDb((s) => session.raw(s)),
        { runId, type: 'probe.ok' },
      ),
    );
    expect(await events()).toBe(1);
    await db.prisma.flowEvent.deleteMany({ where: { run_id: runId, type: 'probe.ok' } });
  });

  it('past its time limit the transaction is rolled back and its next statement throws', async () => {
    const timeoutMs = 50;
    await expect(
      db.driver.transaction(
        async (session) => {
          const tx = rawDb((s) => session.raw(s));
          await appendFlowEvent(tx, { runId, type: 'probe.before-limit' });
          // A timer due after the limit's: Node runs timers in due order, so the limit has passed.
          await sleep(timeoutMs * 2);
          await appendFlowEvent(tx, { runId, type: 'probe.after-limit' });
        },
        { timeoutMs },
      ),
    ).rejects.toBeInstanceOf(TransactionExpired);
    expect(await events()).toBe(0);
  });
});
