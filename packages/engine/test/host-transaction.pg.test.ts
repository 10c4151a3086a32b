import { randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaClient } from '../src/generated/prisma/client.ts';
import { defineAction, defineFlow, EngineError, type Database } from '../src/index.ts';
import { createTestEngine, orderFulfilmentProcess, type TestEngine } from '../src/testing/index.ts';
import { openTestDatabase } from './support/test-database.ts';

const reserve = defineAction({
  name: 'reserve-stock',
  run: async (i: { orderId: string }) => ({ r: `r-${i.orderId}` }),
});
const order = defineFlow({
  name: 'place-order',
  version: 1,
  run: async (ctx, input: { orderId: string }) => ctx.action(reserve, input),
});
const process = orderFulfilmentProcess();
const payment = (orderId: string) => ({
  id: `pay-${orderId}`,
  type: 'PaymentCaptured',
  payload: { orderId, paymentId: `p-${orderId}` },
});

// The host's business table lives beside the engine's schema, in the same database.
const hostTable = 'create table if not exists public.host_orders (id text primary key)';

describe('startFlow and deliver in the host’s own transaction: written iff the host commits', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let hostPrisma: PrismaClient;
  let hostClient: pg.Client;

  beforeAll(async () => {
    db = await openTestDatabase();
    await db.driver.exec(hostTable);
    t = await createTestEngine({ db, flows: [order], actions: [reserve], processes: [process] });
    // A host that uses Prisma builds its client on the engine's pool; a pg host brings any client.
    hostPrisma = new PrismaClient({ adapter: new PrismaPg(db.pool!) });
    hostClient = new pg.Client({ connectionString: db.url });
    await hostClient.connect();
  });
  afterAll(async () => {
    await hostClient.end();
    await hostPrisma.$disconnect();
    await t.close();
    await db.close();
  });

  const hostOrder = async (id: string) =>
    (await db.driver.query<{ id: string }>('select id from public.host_orders where id = $1', [id])).length;
  const engineRows = async (runId: string) => ({
    run: await t.db.prisma.flowRun.count({ where: { id: runId } }),
    events: await t.db.prisma.flowEvent.count({ where: { run_id: runId } }),
    jobs: await t.db.prisma.job.count({ where: { run_id: runId } }),
  });
  const instanceRows = async (orderId: string) => ({
    instances: await t.db.prisma.sagaInstance.count({ where: { correlation_key: orderId } }),
    inbox: await t.db.prisma.inboxMessage.count({ where: { message_id: `pay-${orderId}` } }),
    outbox: await t.db.prisma.outboxMessage.count({ where: { payload: { path: ['orderId'], equals: orderId } } }),
  });

  it('pg client: the host commits, the run exists and runs to Completed', async () => {
    const id = randomUUID();
    await hostClient.query('BEGIN');
    await hostClient.query('insert into public.host_orders (id) values ($1)', [id]);
    const { runId } = await t.engine.startFlow(order, { orderId: id }, { tx: hostClient });
    // Not visible outside the host's transaction before it commits.
    expect((await engineRows(runId)).run).toBe(0);
    await hostClient.query('COMMIT');
    expect(await hostOrder(id)).toBe(1);
    expect((await t.drive(runId)).run.status).toBe('Completed');
  });

  it('pg client: the host rolls back, no run, no event, no job, no business row', async () => {
    const id = randomUUID();
    await hostClient.query('BEGIN');
    await hostClient.query('insert into public.host_orders (id) values ($1)', [id]);
    const { runId } = await t.engine.startFlow(order, { orderId: id }, { tx: hostClient });
    await hostClient.query('ROLLBACK');
    expect(await hostOrder(id)).toBe(0);
    expect(await engineRows(runId)).toEqual({ run: 0, events: 0, jobs: 0 });
    expect(await t.engine.getRun(runId)).toBeNull();
  });

  it('Prisma interactive transaction: commit keeps both, a throw after the start keeps neither', async () => {
    const kept = randomUUID();
    const { runId } = await hostPrisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('insert into public.host_orders (id) values ($1)', kept);
      return t.engine.startFlow(order, { orderId: kept }, { tx });
    });
    expect(await hostOrder(kept)).toBe(1);
    expect((await t.drive(runId)).run.status).toBe('Completed');

    const dropped = randomUUID();
    let droppedRun = '';
    await expect(
      hostPrisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('insert into public.host_orders (id) values ($1)', dropped);
        droppedRun = (await t.engine.startFlow(order, { orderId: dropped }, { tx })).runId;
        throw new Error('the host changed its mind');
      }),
    ).rejects.toThrow('the host changed its mind');
    expect(droppedRun).not.toBe('');
    expect(await hostOrder(dropped)).toBe(0);
    expect(await engineRows(droppedRun)).toEqual({ run: 0, events: 0, jobs: 0 });
  });

  it('deliver in a pg transaction: rollback leaves no instance, inbox or outbox row; the same message then applies', async () => {
    const id = `order-${randomUUID()}`;
    await hostClient.query('BEGIN');
    const inside = await t.engine.processes.deliver(process, payment(id), { tx: hostClient });
    expect(inside).toMatchObject({ outcome: 'applied', to: 'ReservingInventory' });
    await hostClient.query('ROLLBACK');
    expect(await instanceRows(id)).toEqual({ instances: 0, inbox: 0, outbox: 0 });
    // Not recorded as seen: the redelivery is applied, not dropped as a duplicate.
    expect(await t.engine.processes.deliver(payment(id))).toMatchObject({ outcome: 'applied' });
  });

  it('deliver in a Prisma transaction: commit keeps the instance, its outbox command and the inbox record', async () => {
    const id = `order-${randomUUID()}`;
    await hostPrisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('insert into public.host_orders (id) values ($1)', id);
      await t.engine.processes.deliver(payment(id), { tx });
    });
    expect(await instanceRows(id)).toEqual({ instances: 1, inbox: 1, outbox: 1 });
    expect(await t.engine.processes.deliver(payment(id))).toMatchObject({ outcome: 'duplicate' });
  });

  it('a tx that is neither is refused naming the field, and writes nothing', async () => {
    const before = await t.db.prisma.flowRun.count();
    const err = await t.engine
      .startFlow(order, { orderId: 'x' }, { tx: {} as never })
      .catch((e: unknown) => e as EngineError);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ code: 'invalid_input' });
    expect(String((err as EngineError).message)).toMatch(/^tx:/);
    expect(await t.db.prisma.flowRun.count()).toBe(before);
    // A pg client with no BEGIN: refused, not run in autocommit behind the host's back.
    const outside = await t.engine
      .startFlow(order, { orderId: 'y' }, { tx: hostClient })
      .catch((e: unknown) => e as EngineError);
    expect(outside).toMatchObject({ code: 'invalid_input', field: 'tx' });
    expect(await t.db.prisma.flowRun.count()).toBe(before);
  });
});
