import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type RepairCommand } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import { actions, flows, ticket, waiter } from './support/repair-fixtures.ts';
import { snapshotTables } from './support/snapshot.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

describe(`repair input and bulk repairs (${testDbKind()})`, () => {
  let t: T;
  let runId: string;
  let instanceId: string;
  beforeAll(async () => {
    t = await openTestEngine({ flows, actions, processes: [ticket] });
    const { runId: id } = await t.engine.startFlow(waiter, null);
    runId = id;
    await t.drive(runId, { skipTime: false, until: (d) => d.run.waitingFor?.startsWith('signal') ?? false });
    await t.engine.stopWorkers();
    const r = await t.engine.processes.deliver(ticket, { id: 'in-open', type: 'Opened', payload: { key: 'in-1' } });
    instanceId = r.instanceId!;
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const kick = () =>
    ({
      kind: 'run.kick',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      actor: 'ops',
      reason: 'input test',
      idempotencyKey: randomUUID(),
    }) as Record<string, unknown>;
  // Drafted against a version the instance is no longer at: bad input is refused before any state check.
  const instance = (extra: object) => ({
    kind: 'instance.command',
    target: { instanceId },
    expected: { state: 'Open', version: 0 },
    actor: 'ops',
    reason: 'input test',
    idempotencyKey: randomUUID(),
    command: 'Close',
    input: { resolution: 'x' },
    ...extra,
  });
  const force = (to: string) => {
    const { command: _c, input: _i, ...rest } = instance({ kind: 'instance.force_transition' });
    return { ...rest, to };
  };

  const bad: [string, () => unknown, string][] = [
    ['not an object', () => 'kick it', 'command'],
    ['an unknown kind', () => ({ ...kick(), kind: 'run.explode' }), 'kind'],
    ['a run id that is not a uuid', () => ({ ...kick(), target: { runId: 'run-1' } }), 'target.runId'],
    ['no reason', () => ({ ...kick(), reason: undefined }), 'reason'],
    ['a blank reason', () => ({ ...kick(), reason: '  ' }), 'reason'],
    ['a NUL in the actor', () => ({ ...kick(), actor: 'ops\u0000' }), 'actor'],
    ['a lone surrogate in the reason', () => ({ ...kick(), reason: 'why \ud800' }), 'reason'],
    [
      'an idempotency key over the text limit',
      () => ({ ...kick(), idempotencyKey: 'k'.repeat(1001) }),
      'idempotencyKey',
    ],
    [
      'a finished run status as the expectation',
      () => ({ ...kick(), expected: { runStatus: 'Completed' } }),
      'expected.runStatus',
    ],
    ['an unknown key (a typo)', () => ({ ...kick(), expectd: {} }), 'expectd'],
    [
      'a step sequence of 0',
      () => ({
        ...kick(),
        kind: 'run.retry_step',
        target: { runId, stepSequence: 0 },
        expected: { runStatus: 'Waiting', stepStatus: 'Failed', stepAttempts: 1 },
      }),
      'target.stepSequence',
    ],
    [
      'a signal payload JSON cannot hold',
      () => ({ ...kick(), kind: 'run.signal', signal: { name: 'go', payload: { n: 10n } } }),
      'signal.payload.n',
    ],
    [
      'an output with NaN',
      () => ({
        ...kick(),
        kind: 'run.complete_step',
        target: { runId, stepSequence: 1 },
        expected: { runStatus: 'Waiting', stepStatus: 'Running', stepAttempts: 1 },
        output: { total: Number.NaN },
      }),
      'output.total',
    ],
    ['a cleanup window of -1 s', () => ({ ...kick(), kind: 'run.cancel', cleanupSeconds: -1 }), 'cleanupSeconds'],
    ['an unknown operator command', () => instance({ command: 'Explode' }), 'command'],
    ['operator command input its schema refuses', () => instance({ input: { resolution: '' } }), 'input.resolution'],
    [
      'an expected state the process does not have',
      () => instance({ expected: { state: 'Nowhere', version: 0 } }),
      'expected.state',
    ],
    ['a forced transition to a state the process does not have', () => force('Nowhere'), 'to'],
  ];

  it.each(bad)('refuses %s as invalid_input naming the field, and changes nothing', async (_what, make, field) => {
    const before = await snapshotTables(t.db);
    for (const call of [
      () => t.engine.repairs.apply(make() as RepairCommand),
      () => t.engine.repairs.preview(make() as RepairCommand),
    ]) {
      const err = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'invalid_input', field });
    }
    expect(await snapshotTables(t.db)).toEqual(before);
  });

  it('a key reused for another command is refused, naming idempotencyKey', async () => {
    const first = kick();
    await t.engine.repairs.apply(first as RepairCommand);
    const before = await snapshotTables(t.db);
    const other = { ...kick(), kind: 'run.signal', signal: { name: 'go' }, idempotencyKey: first.idempotencyKey };
    await expect(t.engine.repairs.apply(other as RepairCommand)).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'idempotencyKey',
    });
    expect(await snapshotTables(t.db)).toEqual(before);
  });

  it('a bulk repair applies item by item: each its own expectation, transaction and audit row; replayed, none acts twice', async () => {
    const runs = [runId];
    for (let i = 0; i < 2; i++) {
      const { runId: id } = await t.engine.startFlow(waiter, null);
      await t.drive(id, { skipTime: false, until: (d) => d.run.waitingFor?.startsWith('signal') ?? false });
      runs.push(id);
    }
    await t.engine.stopWorkers();
    const missing = randomUUID();
    const bulk = {
      kind: 'run.signal',
      signal: { name: 'go', payload: 'bulk' },
      actor: 'ops',
      reason: 'release the held orders',
      idempotencyKey: `bulk-${randomUUID()}`,
      items: [
        { target: { runId: runs[0] }, expected: { runStatus: 'Waiting' } },
        { target: { runId: runs[1] }, expected: { runStatus: 'Running' } },
        { target: { runId: missing }, expected: { runStatus: 'Waiting' } },
        { target: { runId: runs[2] }, expected: { runStatus: 'Waiting' } },
      ],
    };
    const before = await snapshotTables(t.db);
    const previews = await t.engine.repairs.previewBulk(bulk);
    expect(previews.map((p) => ('notFound' in p ? 'not_found' : p.applicable))).toEqual([
      true,
      false,
      'not_found',
      true,
    ]);
    expect(await snapshotTables(t.db)).toEqual(before);

    const result = await t.engine.repairs.applyBulk(bulk);
    expect(result.items.map((i) => i.outcome)).toEqual(['applied', 'conflict', 'not_found', 'applied']);
    expect(result.applied).toBe(2);
    const audit = await t.db.prisma.repairCommand.findMany({
      where: { bulk_id: result.bulkId },
      orderBy: { at: 'asc' },
    });
    expect(audit.map((a) => [a.target_id, a.status]).sort()).toEqual(
      [
        [runs[0], 'applied'],
        [runs[1], 'conflict'],
        [runs[2], 'applied'],
      ].sort(),
    );
    expect(await t.db.prisma.signal.count({ where: { run_id: { in: runs }, name: 'go' } })).toBe(2);

    const after = await snapshotTables(t.db);
    const again = await t.engine.repairs.applyBulk(bulk);
    expect(again.items.map((i) => i.outcome)).toEqual(['applied', 'conflict', 'not_found', 'applied']);
    expect(again.items.filter((i) => i.result).every((i) => i.result?.replayed)).toBe(true);
    expect(await snapshotTables(t.db), 'a replayed bulk acts on nothing twice').toEqual(after);
  });

  it('a bulk with one bad item is refused whole, naming the item, before anything is applied', async () => {
    const before = await snapshotTables(t.db);
    const bulk = {
      kind: 'run.kick',
      actor: 'ops',
      reason: 'kick them all',
      idempotencyKey: randomUUID(),
      items: [
        { target: { runId }, expected: { runStatus: 'Waiting' } },
        { target: { runId: 'not-a-uuid' }, expected: { runStatus: 'Waiting' } },
      ],
    };
    await expect(t.engine.repairs.applyBulk(bulk)).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'items[1].target.runId',
    });
    await expect(t.engine.repairs.applyBulk({ ...bulk, items: [] })).rejects.toMatchObject({ field: 'items' });
    expect(await snapshotTables(t.db)).toEqual(before);
  });
});
