import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.ts';
import {
  kickCatalogue,
  startFakeControlPlane,
  trpcData,
  type FakeAnswer,
  type FakeControlPlane,
} from './fake-control-plane.ts';

/**
 * The CLI is an HTTP client of the control plane (ADR 0021). CliError (cli-error.ts:3): "A failure the CLI
 * reports as one message (saying what to do next)"; draft-repair.ts:129-130 adds "to retry exactly this
 * command add --idempotency-key …" to a repair that failed with exit 1, so a repair whose answer was lost can be
 * repeated without a second effect. These cases stand a real HTTP server in for the control plane and make its
 * answer break after the request was taken: the connection closed half-way through the body, the body stalled
 * past the CLI's timeout (30 s unless SAGAFLOW_TIMEOUT_SECONDS says otherwise: 2 s here), or a body that is
 * JSON but not an answer.
 */
const run = randomUUID();
const token = `sgf_${'A'.repeat(43)}`;
let fake: FakeControlPlane | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

/** Headers and half a body, then the socket closed. */
const cutMidBody: FakeAnswer = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
  res.write('{"result":{"data":{"id":', () => setTimeout(() => req.socket.destroy(), 20));
};
/** Headers and half a body, then nothing. */
const stallMidBody: FakeAnswer = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
  res.write('{"result":{"data":{"id":');
};
/** Nothing at all: the request was taken, no answer comes. */
const silent: FakeAnswer = () => undefined;

const kick = ['kick', run, '--reason', 'lost answer', '--expect-status', 'Waiting'];

describe('an answer the CLI cannot read', () => {
  it('a list whose answer is cut half-way: exit 1 naming the control plane, not a bare "terminated"', async () => {
    fake = await startFakeControlPlane({ 'runs.page': cutMidBody });
    const r = await runCli(['runs', 'list'], { SAGAFLOW_URL: fake.url, SAGAFLOW_TOKEN: token });
    expect(r.code).toBe(1);
    expect(r.err).toContain(fake.url);
  });

  it('a repair whose answer is cut half-way: exit 1 with the flags that repeat it without a second effect', async () => {
    fake = await startFakeControlPlane({
      'repairs.catalogue': trpcData(kickCatalogue),
      'repairs.applyOne': cutMidBody,
    });
    const r = await runCli(kick, { SAGAFLOW_URL: fake.url, SAGAFLOW_TOKEN: token });
    expect(fake.requests.map((q) => q.path)).toEqual(['repairs.catalogue', 'repairs.applyOne']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/--idempotency-key cli-[0-9a-f-]{36} --expect-status "Waiting"/);
  });

  it('an answer that is JSON null: exit 1 naming the control plane, not a JavaScript TypeError', async () => {
    fake = await startFakeControlPlane({ 'auth.me': (_q, res) => res.writeHead(200).end('null') });
    const r = await runCli(['whoami'], { SAGAFLOW_URL: fake.url, SAGAFLOW_TOKEN: token });
    expect(r.code).toBe(1);
    expect(r.err).not.toMatch(/Cannot read properties/);
    expect(r.err).toContain(fake.url);
  });

  it.concurrent(
    'a repair whose answer stalls half-way: after the timeout, exit 1 with the flags that repeat it',
    async () => {
      const f = await startFakeControlPlane({
        'repairs.catalogue': trpcData(kickCatalogue),
        'repairs.applyOne': stallMidBody,
      });
      try {
        const r = await runCli(kick, { SAGAFLOW_URL: f.url, SAGAFLOW_TOKEN: token, SAGAFLOW_TIMEOUT_SECONDS: '2' });
        expect(r.code).toBe(1);
        expect(r.err).toContain('was not complete after 2 s (SAGAFLOW_TIMEOUT_SECONDS)');
        expect(r.err).toMatch(/--idempotency-key cli-[0-9a-f-]{36} --expect-status "Waiting"/);
      } finally {
        await f.close();
      }
    },
    90_000,
  );

  it.concurrent(
    'held: a repair that gets no answer at all ends after the timeout, exit 1 with the flags that repeat it',
    async () => {
      const f = await startFakeControlPlane({
        'repairs.catalogue': trpcData(kickCatalogue),
        'repairs.applyOne': silent,
      });
      try {
        const r = await runCli(kick, { SAGAFLOW_URL: f.url, SAGAFLOW_TOKEN: token, SAGAFLOW_TIMEOUT_SECONDS: '2' });
        expect(r.code).toBe(1);
        expect(r.err).toContain('did not answer repairs.applyOne within 2 s (SAGAFLOW_TIMEOUT_SECONDS, default 30)');
        expect(r.err).toContain('whether it was done is unknown');
        expect(r.err).toMatch(/--idempotency-key cli-[0-9a-f-]{36} --expect-status "Waiting"/);
      } finally {
        await f.close();
      }
    },
    90_000,
  );

  it('held: a proxy page instead of JSON (502 HTML) is exit 1 saying it is no JSON; --json keeps stdout one JSON document', async () => {
    fake = await startFakeControlPlane({
      'runs.page': (_q, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>'),
    });
    const r = await runCli(['runs', 'list', '--json'], { SAGAFLOW_URL: fake.url, SAGAFLOW_TOKEN: token });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/answered runs\.page with 502 and no JSON/);
    expect((JSON.parse(r.out) as { error: { exitCode: number } }).error.exitCode).toBe(1);
  });

  it('held: a 500 with a tRPC error body is exit 1 with its message; the token is not printed', async () => {
    fake = await startFakeControlPlane({
      'runs.page': (_q, res) =>
        res.writeHead(500, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: { message: 'internal error (id e1)', data: { httpStatus: 500, code: 'INTERNAL_SERVER_ERROR' } },
          }),
        ),
    });
    const r = await runCli(['runs', 'list', '--json'], { SAGAFLOW_URL: fake.url, SAGAFLOW_TOKEN: token });
    expect(r.code).toBe(1);
    expect(r.err).toContain('internal error (id e1)');
    expect(JSON.parse(r.out)).toMatchObject({ error: { exitCode: 1, error: { httpStatus: 500 } } });
    expect(r.out + r.err).not.toContain(token);
    expect(fake.requests[0]?.authorization).toBe(`Bearer ${token}`);
  });
});
