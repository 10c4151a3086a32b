import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { testDatabaseUrl, type apiClient, rejection, signedInClient } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

describe('control plane API over HTTP', () => {
  let plane: ControlPlane;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    const url = await testDatabaseUrl('control');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    api = await signedInClient(plane, 'operator');
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('health answers ok once started', async () => {
    const res = await fetch(`${plane.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('a run started through the API completes and is listed and readable', async () => {
    const { runId } = await api.runs.start.mutate({ flowName: 'demo.order', input: { orderId: 'o-1', amount: 10 } });
    let status = '';
    for (let i = 0; i < 200 && status !== 'Completed'; i++) {
      status = (await api.runs.get.query({ id: runId })).run.status;
      if (status !== 'Completed') await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('Completed');
    const detail = await api.runs.get.query({ id: runId });
    expect(detail.actions.map((a) => [a.name, a.status])).toEqual([
      ['demo.charge-card', 'Completed'],
      ['demo.reserve-stock', 'Completed'],
      ['demo.ship-order', 'Completed'],
    ]);
    // Seed 000's four dials as this plane applies them (its config is the defaults: all off but the TTLs).
    expect(detail.timing).toEqual({
      deadlineDefaults: { runSeconds: null, actionSeconds: null, compensationSeconds: null },
      runTimeoutSeconds: null,
      lock: { enabled: false, ttlSeconds: 900 },
      repairGrace: { enabled: false, graceSeconds: 60, redispatchStaleRunning: true },
      reclaim: { actions: { enabled: false, afterSeconds: 900 }, compensations: { enabled: false, afterSeconds: 900 } },
    });
    const list = await api.runs.list.query({ status: ['Completed'] });
    expect(list.map((r) => r.id)).toContain(runId);
  });

  it('bad input gets a 400 whose message names the field, and changes nothing', async () => {
    const before = (await api.runs.list.query({ limit: 500 })).length;
    expect(await rejection(api.runs.get.query({ id: 'not-a-uuid' }))).toMatchObject({ status: 400, field: 'input.id' });
    expect(await rejection(api.runs.list.query({ status: ['Bogus' as 'Completed'] }))).toMatchObject({
      status: 400,
      field: 'input.status.0',
    });
    expect(await rejection(api.runs.start.mutate({ flowName: '', input: {} }))).toMatchObject({
      status: 400,
      field: 'input.flowName',
    });
    const unknown = await rejection(api.runs.start.mutate({ flowName: 'no-such-flow', input: {} }));
    expect(unknown).toMatchObject({ status: 400 });
    expect(unknown.message).toContain('no-such-flow');
    expect((await api.runs.list.query({ limit: 500 })).length).toBe(before);
  });

  it('a missing run is a 404 naming it; a duplicate business key is a 409', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const missing = await rejection(api.runs.get.query({ id }));
    expect(missing).toMatchObject({ status: 404 });
    expect(missing.message).toContain(id);
    await api.runs.start.mutate({ flowName: 'demo.order', input: { orderId: 'dup', amount: 1 }, businessKey: 'dup' });
    expect(
      await rejection(
        api.runs.start.mutate({ flowName: 'demo.order', input: { orderId: 'dup', amount: 1 }, businessKey: 'dup' }),
      ),
    ).toMatchObject({
      status: 409,
    });
  });

  it('runs.start of a flow that declares its input refuses a wrong one with a 400 naming the field, and starts nothing', async () => {
    const before = await plane.db.prisma.flowRun.count();
    const string = await rejection(api.runs.start.mutate({ flowName: 'demo.order', input: 'just a string' }));
    expect(string).toMatchObject({ status: 400, field: 'input.input' });
    const amount = await rejection(
      api.runs.start.mutate({ flowName: 'demo.order', input: { orderId: 'o', amount: 'lots' } }),
    );
    expect(amount).toMatchObject({ status: 400, field: 'input.input.amount' });
    expect(amount.message).toMatch(/^input\.input\.amount: .*expected number/);
    expect(await plane.db.prisma.flowRun.count()).toBe(before);
  });

  it('runs.flows lists the startable flows with the JSON Schema of their input', async () => {
    const flows = await api.runs.flows.query();
    expect(flows.map((f) => f.name)).toEqual([
      'demo.festival-order',
      'demo.order',
      'demo.pick-list',
      'demo.reservation',
      'demo.ticket',
      'demo.trip',
    ]);
    const order = flows.find((f) => f.name === 'demo.order');
    expect(order).toMatchObject({
      version: 1,
      validatesInput: true,
      inputSchema: {
        type: 'object',
        properties: { orderId: { type: 'string' }, amount: { type: 'number' } },
        required: ['orderId', 'amount'],
      },
    });
    const charge = (await api.runs.actions.query()).find((a) => a.name === 'demo.charge-card');
    expect(charge?.outputSchema).toMatchObject({ properties: { chargeId: { type: 'string' } } });
  });

  it("complete_step's output is checked against the action's output schema: a 400 naming the field, no audit row", async () => {
    const { runId } = await api.runs.start.mutate({ flowName: 'demo.order', input: { orderId: 'o-cs', amount: 3 } });
    // Progress: the step exists (its action is known); the schema is checked whatever state it is in.
    for (let i = 0; i < 200 && (await api.runs.get.query({ id: runId })).actions.length === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    const audits = await plane.db.prisma.repairCommand.count();
    const bad = await rejection(
      api.repairs.applyOne.mutate({
        kind: 'run.complete_step',
        target: { runId, stepSequence: 1 },
        expected: { runStatus: 'Running', stepStatus: 'Running', stepAttempts: 1 },
        output: { chargeId: 7, amount: 3 },
        reason: 'typed output',
        idempotencyKey: `cs-${runId}`,
      }),
    );
    expect(bad).toMatchObject({ status: 400, field: 'input.output.chargeId' });
    expect(await plane.db.prisma.repairCommand.count()).toBe(audits);
    expect(await plane.db.prisma.repairApproval.count({ where: { idempotency_key: `cs-${runId}` } })).toBe(0);
  });
});
