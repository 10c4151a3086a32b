import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
  createTestOperator,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli } from '../../support/run-cli.ts';

/**
 * Review 58 (ADR 0132 §1 and Consequences: "The CLI exits 1 for it (an error, nothing changed), as for
 * any 409 that is not a repair's own refusal"). Review 56 checked `sagaflow kick` on a held run. The
 * approval path is the other way an operator's repair reaches the engine from the CLI: a gated command
 * (run.terminate, gated out of the box) drafted by one operator and approved by a second with
 * `sagaflow approve <id>` while another session holds the run. The engine answers `target_busy` and the
 * approval stays pending (review 56, held). What the approver's script is told: exit 2 is "Refused ...
 * Nothing changed" (draft it again: the approval is decided), exit 1 is an error to send again. Here the
 * right next step is to approve the same approval again, so the CLI must not say it was refused.
 */
describe('review 58: sagaflow approve while the target is held by another session (PostgreSQL)', () => {
  let plane: ControlPlane;
  let drafterCookie = '';
  let token = '';
  let release: () => void = () => undefined;
  let holding: Promise<unknown> = Promise.resolve();
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('r58_cli_approve_busy'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        // Half of it (1 s) is how long a repair waits for a held row (ADR 0132 §1).
        SAGAFLOW_ENGINE_CONFIG: JSON.stringify({ processes: { transaction_timeout_ms: 2_000 } }),
      }),
    );
    drafterCookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const approverCookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    token = (await apiClient(plane.url, approverCookie).tokens.create.mutate({ name: 'cli' })).token;
  });
  afterAll(async () => {
    release();
    await holding.catch(() => undefined);
    await plane?.stop();
  });

  it('an approve that finds the run busy exits 1, leaves the approval pending, and applies when approved again', async () => {
    const runId = await startWaitingRun(plane, drafterCookie);
    const drafted = (await apiClient(plane.url, drafterCookie).repairs.applyOne.mutate({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason: 'r58: the customer left',
      idempotencyKey: randomUUID(),
    })) as { status: string; approvalId: string };
    expect(drafted.status).toBe('awaiting_approval');

    // Another session keeps the run's row (an operator's psql, a host's open transaction).
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    const letGo = new Promise<void>((r) => (release = r));
    holding = plane.db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select id from "sagaflow"."flow_runs" where id = ${runId}::uuid for update`;
        held();
        await letGo;
      },
      { timeout: 110_000, maxWait: 10_000 },
    );
    await isHeld;
    const env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
    const human = await runCli(['approve', drafted.approvalId], env);
    const json = await runCli(['approve', drafted.approvalId, '--json'], env);
    const doc = JSON.parse(json.out || '{}') as { error?: { exitCode?: number; message?: string } };
    const approval = await plane.db.prisma.repairApproval.findUniqueOrThrow({ where: { id: drafted.approvalId } });
    const audited = await plane.db.prisma.repairCommand.count({ where: { target_id: runId } });
    const run = await plane.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    release();
    await holding;

    // What held: nothing changed, nothing audited, still pending, and the message says busy.
    expect({ approval: approval.status, audited, run: run.status }).toEqual({
      approval: 'pending',
      audited: 0,
      run: 'Waiting',
    });
    expect(human.err).toMatch(/another session held a row it needed.*nothing changed/);
    // The exit status a script reads (ADR 0132: 1 for target_busy; 2 means refused, the approval decided).
    expect(
      { human: human.code, json: json.code, jsonExit: doc.error?.exitCode },
      `human (exit ${human.code}): ${human.err}\njson (exit ${json.code}): ${json.out}`,
    ).toEqual({ human: 1, json: 1, jsonExit: 1 });

    const again = await runCli(['approve', drafted.approvalId], env);
    expect(again.code, again.err || again.out).toBe(0);
  }, 120_000);
});
