import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { actions, flows } from '../../repairs/support/repair-fixtures.ts';
import { snapshotTables } from '../../repairs/support/snapshot.ts';
import { waitingRun as parkedOnSignal } from '../../repairs/support/waiting-run.ts';

/**
 * ADR 0020 and ADR 0013 at the approvals' entries: bad input is `invalid_input` naming the field and
 * writes nothing; "the same idempotency key is the same draft … a key reused for another command is
 * `invalid_input` on `idempotencyKey`". Each case compares every table before and after.
 */
describe(`the approvals' entries refuse bad input, naming the field, and write nothing (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows, actions });
    // Every bulk of two or more targets waits for a second operator.
    await t.engine.approvals.setPolicy({ gatedCommands: [], bulkThreshold: 1 }, { actor: 'root' });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const waitingRun = () => parkedOnSignal(t);

  const cancelBulk = (runIds: string[], idempotencyKey = randomUUID()) => ({
    kind: 'run.cancel',
    actor: 'ana',
    reason: 'bulk cleanup after the outage',
    idempotencyKey,
    items: runIds.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
  });

  /** What a call answered: its result's status, or its error's code and field. */
  const outcome = (p: Promise<unknown>) =>
    p.then(
      (r) => ({ resolved: (r as { status?: string }).status ?? 'applied' }),
      (e: unknown) => ({ code: (e as { code?: string }).code ?? String(e), field: (e as { field?: string }).field }),
    );

  it('approve and reject: a bad id, approver or reason is refused naming it; nothing is written', async () => {
    const r = await t.engine.approvals.submitBulk(cancelBulk([await waitingRun(), await waitingRun()]));
    if (!('status' in r)) throw new Error('bulk not gated');
    const before = await snapshotTables(t.db);
    const id = r.approvalId;
    expect({
      badId: await outcome(t.engine.approvals.approve('not-a-uuid', 'ben')),
      numberId: await outcome(t.engine.approvals.approve(42, 'ben')),
      unknownId: await outcome(t.engine.approvals.approve(randomUUID(), 'ben')),
      blankApprover: await outcome(t.engine.approvals.approve(id, '  ')),
      objectApprover: await outcome(t.engine.approvals.approve(id, { name: 'ben' } as unknown as string)),
      nulApprover: await outcome(t.engine.approvals.approve(id, 'b\u0000en')),
      blankReason: await outcome(t.engine.approvals.reject(id, 'ben', ' ')),
      numberReason: await outcome(t.engine.approvals.reject(id, 'ben', 7)),
      longReason: await outcome(t.engine.approvals.reject(id, 'ben', 'x'.repeat(1_000_000))),
      badGetId: await outcome(t.engine.approvals.get('../../etc')),
    }).toEqual({
      badId: { code: 'invalid_input', field: 'id' },
      numberId: { code: 'invalid_input', field: 'id' },
      unknownId: { code: 'approval_not_found', field: null },
      blankApprover: { code: 'invalid_input', field: 'approver' },
      objectApprover: { code: 'invalid_input', field: 'approver' },
      nulApprover: { code: 'invalid_input', field: 'approver' },
      blankReason: { code: 'invalid_input', field: 'reason' },
      numberReason: { code: 'invalid_input', field: 'reason' },
      longReason: { code: 'invalid_input', field: 'reason' },
      badGetId: { code: 'invalid_input', field: 'id' },
    });
    expect(await snapshotTables(t.db)).toEqual(before);
  });

  it('a bulk idempotency key reused for a bulk over other targets is invalid_input on idempotencyKey, not the first draft', async () => {
    const key = randomUUID();
    const first = await t.engine.approvals.submitBulk(cancelBulk([await waitingRun(), await waitingRun()], key));
    if (!('status' in first)) throw new Error('bulk not gated');
    const [c, d] = [await waitingRun(), await waitingRun()];
    const before = await snapshotTables(t.db);
    const second = await t.engine.approvals.submitBulk(cancelBulk([c, d], key)).then(
      (r) =>
        'status' in r
          ? { status: r.status, replayed: r.replayed, sameApprovalAsTheFirst: r.approvalId === first.approvalId }
          : { applied: r.applied },
      (e: unknown) => ({ code: (e as { code?: string }).code, field: (e as { field?: string }).field }),
    );
    expect(second).toEqual({ code: 'invalid_input', field: 'idempotencyKey' });
    expect(await snapshotTables(t.db)).toEqual(before);
  });

  it('a bulk item carrying a field no command has, with text the database cannot store, is invalid_input naming the item', async () => {
    const [a, b] = [await waitingRun(), await waitingRun()];
    const bulk = cancelBulk([a, b]);
    const items = [{ ...bulk.items[0]!, note: 'see ticket\u0000 4711' }, bulk.items[1]!];
    const before = await snapshotTables(t.db);
    const r = await outcome(t.engine.approvals.submitBulk({ ...bulk, items }));
    expect(r).toMatchObject({ code: 'invalid_input', field: expect.stringMatching(/^items\[0\]/) as unknown });
    expect(await snapshotTables(t.db)).toEqual(before);
  });
});
