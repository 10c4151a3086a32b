import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { expect, inject } from 'vitest';
import '../provided-context.ts';
import type { AppRouter } from '../../src/api/app-router.ts';
import { createOperator } from '../../src/auth/create-operator.ts';
import type { Role } from '../../src/auth/roles.ts';
import type { ControlPlane } from '../../src/start-control-plane.ts';

/** A fresh, migrated database on the test cluster (a clone of the template), named after `label`. */
export function testDatabaseUrl(label: string): Promise<string> {
  return createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName(label), { template: inject('pgTemplate') });
}

/** A tRPC client for a control plane listening at `url`, sending `cookie` (a session) when given. */
export function apiClient(url: string, cookie?: string) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${url}/trpc`, headers: () => (cookie ? { cookie } : {}) })],
  });
}

export const testPassword = 'correct horse battery staple';

/** Creates an operator with `role` (and the test password) straight in the database; returns its name. */
export async function createTestOperator(
  plane: ControlPlane,
  role: Role,
  name = `${role}-${randomUUID().slice(0, 8)}`,
) {
  await createOperator(
    plane.db.prisma,
    { name, displayName: `Test ${role}`, role, password: testPassword },
    { id: null, name: 'test', address: null, at: new Date() },
  );
  return name;
}

/** Signs in over HTTP as `name`; the session cookie (name=value) the control plane set. */
export async function signInCookie(url: string, name: string, password = testPassword): Promise<string> {
  const res = await fetch(`${url}/trpc/auth.signIn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password }),
  });
  const setCookie = res.headers.get('set-cookie');
  if (res.status !== 200 || !setCookie) throw new Error(`sign-in as ${name} failed: ${res.status} ${await res.text()}`);
  return setCookie.split(';')[0] ?? '';
}

/** A client signed in as a new operator with `role` (admin unless asked). */
export async function signedInClient(plane: ControlPlane, role: Role = 'admin') {
  return apiClient(plane.url, await signInCookie(plane.url, await createTestOperator(plane, role)));
}

/** What a refused call told the client: its message, HTTP status and the field it named. */
export async function rejection(p: Promise<unknown>) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCClientError);
  const e = err as TRPCClientError<AppRouter>;
  return {
    message: e.message,
    status: e.data?.httpStatus,
    field: (e.data as { field?: string | null } | undefined)?.field,
  };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * One HTTP request to the control plane's API with the headers a browser or an attacker would set
 * (Cookie, Authorization, Origin, Host, X-Forwarded-For): node:http, since fetch will not send a Host of our choosing.
 * A query sends `input` in the URL, a mutation as the POST body.
 */
export function rawCall(
  baseUrl: string,
  path: string,
  options: {
    type?: 'query' | 'mutation';
    input?: unknown;
    cookie?: string;
    origin?: string;
    host?: string;
    forwardedFor?: string;
    /** An `Authorization` header value, e.g. `Bearer sgf_...`. */
    authorization?: string;
  } = {},
): Promise<RawAnswer> {
  const type = options.type ?? 'query';
  const url = new URL(`${baseUrl}/trpc/${path}`);
  if (type === 'query' && options.input !== undefined) url.searchParams.set('input', JSON.stringify(options.input));
  const body = type === 'mutation' ? JSON.stringify(options.input ?? {}) : undefined;
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (options.cookie) headers.cookie = options.cookie;
  if (options.origin) headers.origin = options.origin;
  if (options.host) headers.host = options.host;
  if (options.forwardedFor) headers['x-forwarded-for'] = options.forwardedFor;
  if (options.authorization) headers.authorization = options.authorization;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: type === 'mutation' ? 'POST' : 'GET', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Starts a `demo.reservation` run through the API as the operator of `cookie` and waits (by polling
 * the engine, up to 10 s) until it parks Waiting for its signal: a run that repairs can be drafted
 * against. Returns its id.
 */
export async function startWaitingRun(plane: ControlPlane, cookie: string): Promise<string> {
  const { runId } = await apiClient(plane.url, cookie).runs.start.mutate({
    flowName: 'demo.reservation',
    input: { orderId: randomUUID() },
  });
  for (let i = 0; i < 400; i++) {
    if ((await plane.engine.getRun(runId))?.run.status === 'Waiting') return runId;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} never reached Waiting`);
}
