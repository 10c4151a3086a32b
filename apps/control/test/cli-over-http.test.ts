import { randomUUID } from 'node:crypto';
import { createEngine, defineFlow, type Engine } from '@sagaflow/engine';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { apiClient, createTestOperator, signInCookie, testDatabaseUrl, testPassword } from './support/test-plane.ts';
import { fulfilmentProcess } from '../src/demo/fulfilment-process.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';
import { runCli } from './support/run-cli.ts';

const cli = runCli;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A flow the control plane does not know: a run of it is stuck `unknown_flow` once its workers claim it. */
const retiredFlow = defineFlow({ name: 'cli.retired', version: 1, run: async () => ({ ok: true }) });

describe('the sagaflow CLI against a running control plane (real HTTP, PostgreSQL, child processes)', () => {
  let plane: ControlPlane;
  let starter: Engine;
  const names = { viewer: '', operator: '', admin: '' };
  let operatorToken = '';
  let operatorTokenId = '';
  let viewerToken = '';
  let env: (token?: string) => Record<string, string>;
  beforeAll(async () => {
    const url = await testDatabaseUrl('cli_http');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    env = (token) => ({ SAGAFLOW_URL: plane.url, ...(token ? { SAGAFLOW_TOKEN: token } : {}) });
    for (const role of ['viewer', 'operator', 'admin'] as const) names[role] = await createTestOperator(plane, role);
    const viewer = await apiClient(plane.url, await signInCookie(plane.url, names.viewer)).tokens.create.mutate({
      name: 'viewer-cli',
    });
    viewerToken = viewer.token;
    // Started through the same database by an engine that knows the retired flow; never runs it.
    starter = createEngine({ db: plane.db, flows: [retiredFlow], actions: [], logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await plane.stop();
  });

  const waitFor = async (runId: string, ok: (d: Awaited<ReturnType<Engine['getRun']>>) => boolean) => {
    for (let i = 0; i < 400; i++) {
      const d = await plane.engine.getRun(runId);
      if (ok(d)) return d;
      await sleep(25);
    }
    throw new Error(`run ${runId} did not get there; it is ${JSON.stringify((await plane.engine.getRun(runId))?.run)}`);
  };
  async function waitingRun(): Promise<string> {
    const { runId } = await plane.engine.startFlow('demo.reservation', { orderId: randomUUID() });
    await waitFor(runId, (d) => d?.run.status === 'Waiting');
    return runId;
  }

  it('token create --sign-in makes the first token with a password from stdin, printed once, stored only hashed', async () => {
    const made = await cli(
      ['token', 'create', '--name', 'laptop', '--sign-in', names.operator, '--password-stdin', '--json'],
      env(),
      `${testPassword}\n`,
    );
    expect(made.err).toBe('');
    expect(made.code).toBe(0);
    const created = JSON.parse(made.out) as { id: string; token: string; operator: string };
    expect(created.operator).toBe(names.operator);
    expect(created.token).toMatch(/^sgf_/);
    operatorToken = created.token;
    operatorTokenId = created.id;
    const dump = await plane.db.prisma.$queryRawUnsafe<unknown[]>(`select * from sagaflow.api_tokens`);
    expect(JSON.stringify(dump)).not.toContain(created.token);
    // The session it signed in with is ended again.
    expect(await plane.db.prisma.session.count({ where: { operator: { name: names.operator } } })).toBe(0);

    const human = await cli(['token', 'list'], env(operatorToken));
    expect(human.code).toBe(0);
    expect(human.out).toContain('laptop');
    expect(human.out).toContain(created.token.slice(0, 12));
    expect(human.out).not.toContain(created.token);

    const wrong = await cli(
      ['token', 'create', '--name', 'x', '--sign-in', names.operator, '--password-stdin'],
      env(),
      'nope\n',
    );
    expect(wrong.code).toBe(3);
    expect(wrong.err).toContain('wrong name or password');
  });

  it('runs list and run show read the running control plane, for people and as JSON', async () => {
    const runId = await waitingRun();
    await plane.engine.startFlow('demo.reservation', { orderId: randomUUID() });
    const listed = await cli(
      ['runs', 'list', '--flow', 'demo.reservation', '--status', 'Waiting', '--json'],
      env(viewerToken),
    );
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.out) as { items: { id: string }[] }).items.map((r) => r.id)).toContain(runId);
    const table = await cli(['runs', 'list', '--flow', 'demo.reservation', '--limit', '1'], env(viewerToken));
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/^RUN\s+FLOW\s+STATUS/m);
    expect(table.out).toMatch(/next page: sagaflow runs list --flow demo.reservation --limit 1 --cursor \S+/);

    const shown = await cli(['run', 'show', runId], env(viewerToken));
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`run ${runId}  demo.reservation@1  Waiting`);
    expect(shown.out).toMatch(/1\s+action\s+demo.reserve-resource\s+Completed/);
    expect(shown.out).toContain('safe repairs now: run.kick');

    const missing = await cli(['run', 'show', randomUUID()], env(viewerToken));
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('does not exist');
  });

  it('kick repairs a stuck run while the control plane holds the database; the audit row names the token operator and the token', async () => {
    const { runId } = await starter.startFlow('cli.retired', {});
    await waitFor(runId, (d) => (d?.run.stuckReason ?? '').startsWith('unknown_flow'));

    const preview = await cli(['kick', runId, '--dry-run'], env(operatorToken));
    expect(preview.code).toBe(0);
    expect(preview.out).toContain(`run.kick on run ${runId} would apply (dry run: nothing written)`);
    expect(await plane.db.prisma.repairCommand.count({ where: { target_id: runId } })).toBe(0);

    const kicked = await cli(['kick', runId, '--reason', 'deployed cli.retired again', '--json'], env(operatorToken));
    expect(kicked.err).toBe('');
    expect(kicked.code).toBe(0);
    const answer = JSON.parse(kicked.out) as { command: { expected: unknown }; result: { id: string; status: string } };
    expect(answer.command.expected).toEqual({ runStatus: 'Waiting' });
    expect(answer.result.status).toBe('applied');
    const rows = await plane.db.prisma.repairCommand.findMany({ where: { target_id: runId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: answer.result.id,
      actor: names.operator,
      via: `token laptop (${operatorToken.slice(0, 12)}…)`,
      command: 'run.kick',
      status: 'applied',
      reason: 'deployed cli.retired again',
    });
    const events = (await plane.engine.getRun(runId))?.events.filter((e) => e.type === 'repair.applied') ?? [];
    expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ actor: names.operator, via: rows[0]?.via })]);
  });

  it('a repair drafted against a state that moved exits 2, says what the run is now, and changes nothing', async () => {
    const runId = await waitingRun();
    const stale = await cli(
      ['cancel', runId, '--compensate', '--reason', 'customer asked', '--expect-status', 'Running'],
      env(operatorToken),
    );
    expect(stale.code).toBe(2);
    expect(stale.err).toMatch(/drafted against \{"runStatus":"Running"\} but the run is now \{.*"runStatus":"Waiting"/);
    expect(stale.err).toContain('Run the command again to draft it against the state now');
    expect((await plane.engine.getRun(runId))?.run.status).toBe('Waiting');
    expect(
      (await plane.db.prisma.repairCommand.findMany({ where: { target_id: runId } })).map((r) => r.status),
    ).toEqual(['conflict']);

    const dry = await cli(
      ['terminate', runId, '--dry-run', '--expect-status', 'Pending', '--json'],
      env(operatorToken),
    );
    expect(dry.code).toBe(2);
    expect((JSON.parse(dry.out) as { preview: { expectedHolds: boolean } }).preview.expectedHolds).toBe(false);

    // Drafted from the state it reads, the same cancel applies; its key replays without a second effect.
    const key = `cli-test-${randomUUID()}`;
    const ok = await cli(['cancel', runId, '--reason', 'customer asked', '--idempotency-key', key], env(operatorToken));
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toContain(`run.cancel applied to run ${runId}`);
    expect(ok.out).toContain(
      `to repeat it without a second effect: --idempotency-key ${key} --expect-status "Waiting"`,
    );
    const again = await cli(
      ['cancel', runId, '--reason', 'customer asked', '--idempotency-key', key, '--expect-status', 'Waiting'],
      env(operatorToken),
    );
    expect(again.code).toBe(0);
    expect(again.out).toContain('replayed');
    expect(await plane.db.prisma.repairCommand.count({ where: { target_id: runId, status: 'applied' } })).toBe(1);
  });

  it('reclaim --compensation L.O drafts against that compensation; one the run does not have is named, nothing changes', async () => {
    const runId = await waitingRun();
    const bad = await cli(['reclaim', runId, '--compensation', '0.0', '--reason', 'x'], env(operatorToken));
    expect(bad.code).toBe(64);
    expect(bad.err).toContain('--compensation must be LEVEL.ORDINAL');
    const both = await cli(
      ['reclaim', runId, '--step', '1', '--compensation', '1.0', '--reason', 'x'],
      env(operatorToken),
    );
    expect(both.code).toBe(64);
    expect(both.err).toContain('takes --step or --compensation, not both');
    const missing = await cli(['reclaim', runId, '--compensation', '1.0', '--reason', 'x'], env(operatorToken));
    expect(missing.code).toBe(64);
    expect(missing.err).toContain(`run ${runId} has no compensation 1.0; its compensations: none yet`);
    // Drafted against a state given by hand, the control plane decides: the compensation is not there.
    const dry = await cli(
      [
        ...['reclaim', runId, '--compensation', '1.0', '--dry-run', '--json'],
        ...['--expect-status', 'Waiting', '--expect-step-status', 'Running', '--expect-attempts', '1'],
      ],
      env(operatorToken),
    );
    expect(dry.code, dry.err).toBe(2);
    const { command, preview } = JSON.parse(dry.out) as {
      command: { target: unknown };
      preview: { expectedHolds: boolean; actual: { step: unknown } };
    };
    expect(command.target).toEqual({ runId, compensation: { rollbackLevel: 1, ordinal: 0 } });
    expect(preview).toMatchObject({ expectedHolds: false, actual: { step: null } });
    expect(await plane.db.prisma.repairCommand.count({ where: { target_id: { startsWith: runId } } })).toBe(0);
  });

  it('an instance repair is drafted against its state and version; one the instance cannot take exits 2 and changes nothing', async () => {
    const orderId = randomUUID();
    const delivered = await plane.engine.processes.deliver(fulfilmentProcess, {
      id: `note-${orderId}`,
      type: 'CustomerNoteAdded',
      payload: { orderId, note: 'leave it at the door' },
    });
    const instanceId = delivered.instanceId ?? '';
    const shown = await cli(['instance', 'show', instanceId], env(viewerToken));
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`instance ${instanceId}  demo.fulfilment  ACTIVE  in AwaitingPayment (version`);
    const before = await plane.engine.processes.find(instanceId);

    const noMode = await cli(['release', instanceId, '--reason', 'x'], env(operatorToken));
    expect(noMode.code).toBe(64);
    expect(noMode.err).toContain('needs exactly one of --retry');

    const release = await cli(
      ['release', instanceId, '--skip', '--reason', 'poison note', '--json'],
      env(operatorToken),
    );
    expect(release.code).toBe(2);
    const body = JSON.parse(release.out) as { error: { command: { expected: unknown } } };
    expect(body.error.command.expected).toEqual({ state: 'AwaitingPayment', version: before?.version });
    const rows = await plane.db.prisma.repairCommand.findMany({ where: { target_id: instanceId } });
    expect(rows.map((r) => [r.command, r.status, r.actor])).toEqual([['instance.release', 'refused', names.operator]]);
    expect(await plane.engine.processes.find(instanceId)).toEqual(before);
  });

  it('no token, or a revoked one, exits 3 with what to do; a viewer token reads but cannot repair', async () => {
    const runId = await waitingRun();
    const none = await cli(['kick', runId, '--reason', 'x'], env());
    expect(none.code).toBe(3);
    expect(none.err).toContain(
      'no API token: SAGAFLOW_TOKEN is not set; create a token with `npm run sagaflow -- token create',
    );

    const viewer = await cli(['kick', runId, '--reason', 'x'], env(viewerToken));
    expect(viewer.code).toBe(3);
    expect(viewer.err).toContain(`needs the operator role; ${names.viewer} is viewer`);
    expect(await plane.db.prisma.repairCommand.count({ where: { target_id: runId } })).toBe(0);
    expect((await cli(['instances', 'list'], env(viewerToken))).code).toBe(0);

    const spare = JSON.parse((await cli(['token', 'create', '--name', 'spare', '--json'], env(operatorToken))).out) as {
      id: string;
      token: string;
    };
    const revoked = await cli(['token', 'revoke', spare.id], env(operatorToken));
    expect(revoked.code).toBe(0);
    expect(revoked.out).toContain('revoked: its next request is refused');
    const refused = await cli(['runs', 'list'], env(spare.token));
    expect(refused.code).toBe(3);
    expect(refused.err).toMatch(/API token "spare" .* was revoked at .*; create a token with/);
    expect(operatorTokenId).not.toBe(spare.id);
  });

  it('create-operator (admin) makes an operator whose password signs in; an operator token is refused', async () => {
    const adminToken = (
      await apiClient(plane.url, await signInCookie(plane.url, names.admin)).tokens.create.mutate({ name: 'admin-cli' })
    ).token;
    const name = `oncall-${randomUUID().slice(0, 6)}`;
    const made = await cli(
      ['create-operator', name, '--role', 'operator', '--password-stdin'],
      env(adminToken),
      `${testPassword}\n`,
    );
    expect(made.err).toBe('');
    expect(made.code).toBe(0);
    expect(made.out).toContain(`operator ${name} created with role operator`);
    expect(await signInCookie(plane.url, name)).toMatch(/^sagaflow_session=/);
    const refused = await cli(
      ['create-operator', 'x-op', '--role', 'viewer', '--password-stdin'],
      env(operatorToken),
      `${testPassword}\n`,
    );
    expect(refused.code).toBe(3);
    expect(await plane.db.prisma.operator.count({ where: { name: 'x-op' } })).toBe(0);
  });

  it('usage errors exit 64 before anything is sent; an unreachable control plane exits 1 and says how to fix it', async () => {
    const noReason = await cli(['kick', randomUUID()], env(operatorToken));
    expect(noReason.code).toBe(64);
    expect(noReason.err).toContain('needs --reason');
    const noStep = await cli(['retry', randomUUID(), '--reason', 'x'], env(operatorToken));
    expect(noStep.code).toBe(64);
    expect(noStep.err).toContain('run.retry_step needs --step N');
    const badJson = await cli(
      ['signal', randomUUID(), 'confirm', '--payload', '{nope', '--reason', 'x'],
      env(operatorToken),
    );
    expect(badJson.code).toBe(64);
    expect(badJson.err).toContain('--payload must be JSON');
    const unknownKind = await cli(['repair', 'run.teleport', randomUUID(), '--reason', 'x'], env(operatorToken));
    expect(unknownKind.code).toBe(64);
    expect(unknownKind.err).toMatch(/has no run.teleport repair; it offers run.kick, /);
    const down = await cli(['runs', 'list'], { SAGAFLOW_URL: 'http://127.0.0.1:9', SAGAFLOW_TOKEN: operatorToken });
    expect(down.code).toBe(1);
    expect(down.err).toContain('cannot reach the control plane at http://127.0.0.1:9');
    const help = await cli(['help'], {});
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/Exit status\n {2}0 {3}done/);
  });
});
