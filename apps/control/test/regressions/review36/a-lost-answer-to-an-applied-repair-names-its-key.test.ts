import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
 * ADR 0021: "The idempotency key is generated unless given, and the output prints the flags that repeat exactly
 * that command"; draft-repair.ts:129-130 prints them on an exit-1 failure. Here a real control plane applies the
 * repair and a real proxy in front of it (a load balancer dropping the connection) cuts the answer half-way.
 * The repair is applied; the CLI's message must carry the key it was applied under, so the operator's retry is
 * that command and not a second one with a fresh key.
 */
describe('a repair applied by the control plane whose answer is lost on the way back', () => {
  let plane: ControlPlane;
  let proxy: Server;
  let proxyUrl = '';
  let cookie = '';
  let token = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r36_lost_answer');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    token = (await apiClient(plane.url, cookie).tokens.create.mutate({ name: 'cli' })).token;
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers: Record<string, string> = {};
        for (const h of ['authorization', 'content-type', 'accept'])
          if (typeof req.headers[h] === 'string') headers[h] = req.headers[h];
        void fetch(`${plane.url}${req.url ?? ''}`, {
          method: req.method ?? 'GET',
          headers,
          ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
        }).then(async (answer) => {
          const body = Buffer.from(await answer.arrayBuffer());
          res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': String(body.length) });
          if (!req.url?.startsWith('/trpc/repairs.applyOne')) return res.end(body);
          res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => req.socket.destroy(), 20));
        });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    proxy.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
    await plane.stop();
  });

  it('exit 1 and the message names the idempotency key the repair was applied under', async () => {
    const runId = await startWaitingRun(plane, cookie);
    const r = await runCli(['kick', runId, '--reason', 'lost answer'], {
      SAGAFLOW_URL: proxyUrl,
      SAGAFLOW_TOKEN: token,
    });
    const rows = await plane.db.prisma.$queryRawUnsafe<{ idempotency_key: string; status: string }[]>(
      `select idempotency_key, status from sagaflow.repair_commands where target_id = $1`,
      runId,
    );
    expect(rows.map((x) => x.status)).toEqual(['applied']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`--idempotency-key ${rows[0]?.idempotency_key}`);
  });
});
