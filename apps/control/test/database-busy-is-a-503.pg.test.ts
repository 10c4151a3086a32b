import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { createTestOperator, signInCookie, testDatabaseUrl } from './support/test-plane.ts';
import { appRouter } from '../src/api/app-router.ts';
import { authOptionsFrom } from '../src/auth/auth-options.ts';
import { resolveSession } from '../src/auth/resolve-session.ts';
import { sessionTokenFrom } from '../src/auth/session-cookie.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/**
 * ADR 0130. While every connection of the control plane's pool is taken, a call waits for one for the
 * pool's connect timeout and then fails. It used to answer 500 "internal error, see the control plane
 * log": an on-call person could not tell a busy database from a bug, nor whether anything was done. It
 * is a 503 with Retry-After that says the database gave no connection in time and what was done.
 */
describe('a call that gets no database connection in time is a 503 saying so (PostgreSQL)', () => {
  let plane: ControlPlane;
  let cookie = '';
  const env = async () =>
    parseEnv({ DATABASE_URL: await testDatabaseUrl('db_busy'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' });
  let held: { release(): void }[] = [];
  const holdEveryConnection = async () => {
    const pool = plane.db.pool;
    if (!pool) throw new Error('the plane runs on PostgreSQL: it has a pool');
    held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
  };
  const release = () => {
    for (const c of held) c.release();
    held = [];
  };

  let parsed: Awaited<ReturnType<typeof env>>;
  beforeAll(async () => {
    parsed = await env();
    plane = await startControlPlane(parsed);
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
  });
  afterAll(async () => {
    release();
    await plane?.stop();
  });

  /**
   * The three calls below, made at once while every connection is held, and their answers: each waits
   * the pool's connect timeout (5 s, create-database.ts) side by side instead of one after another. The
   * procedure's session is read before the hold; the pool is released once all three have answered.
   */
  const url = (path: string) => `${plane.url}${path}`;
  let busyAnswers:
    Promise<{ page: Response; history: Response; procedure: unknown; headers: Map<string, string> }> | undefined;
  const whileBusy = () =>
    (busyAnswers ??= (async () => {
      const auth = authOptionsFrom(parsed);
      const session = await resolveSession(plane.db.prisma, auth, sessionTokenFrom(cookie));
      expect(session.state).toBe('active');
      const headers = new Map<string, string>();
      const caller = appRouter.createCaller({
        engine: plane.engine,
        db: plane.db,
        auth,
        session,
        bearer: false,
        origin: null,
        address: null,
        setHeader: (name, value) => headers.set(name, value),
      });
      await holdEveryConnection();
      try {
        const [page, history, procedure] = await Promise.all([
          fetch(url(`/trpc/runs.page?input=${encodeURIComponent(JSON.stringify({}))}`), { headers: { cookie } }),
          fetch(url('/history/runs/00000000-0000-4000-8000-000000000000'), { headers: { cookie } }),
          caller.runs.page({}).then(
            () => null,
            (e: unknown) => e,
          ),
        ]);
        return { page, history, procedure, headers };
      } finally {
        release();
      }
    })());

  it('over HTTP: the session could not be read, so nothing was done; 503, Retry-After, and the same call works once the pool frees', async () => {
    const res = (await whileBusy()).page;
    const body = (await res.json()) as { error: { message: string; data: { httpStatus: number } } };
    expect(res.status, JSON.stringify(body)).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(body.error.message).toMatch(
      /^the database gave the control plane no connection in time \(its connection pool is busy\): nothing was done; try again in a moment \(request id [0-9a-f-]{36}\)$/,
    );
    const again = await fetch(`${plane.url}/trpc/runs.page?input=${encodeURIComponent(JSON.stringify({}))}`, {
      headers: { cookie },
    });
    expect(again.status).toBe(200);
  });

  it('a history download is a 503 with Retry-After saying nothing was done', async () => {
    const res = (await whileBusy()).history;
    const body = (await res.json()) as { error: string };
    expect(res.status, JSON.stringify(body)).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(body.error).toMatch(/no connection in time .*: nothing was done; try again in a moment$/);
  });

  it('in a procedure, after the session was read: a read is a 503 saying nothing was done', async () => {
    const { procedure: err, headers } = await whileBusy();
    expect(err).toBeInstanceOf(TRPCError);
    expect((err as TRPCError).code).toBe('SERVICE_UNAVAILABLE');
    expect((err as TRPCError).message).toMatch(/no connection in time .*: nothing was done; try again in a moment$/);
    expect(headers.get('retry-after')).toBe('1');
  });
});
