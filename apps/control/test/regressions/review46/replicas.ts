import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createDatabase, type Database } from '@sagaflow/engine';
import { createOperator } from '../../../src/auth/create-operator.ts';
import type { Role } from '../../../src/auth/roles.ts';
import { controlEntry } from '../../support/compiled-control.ts';
import { rawCall, testPassword, type RawAnswer } from '../../support/test-plane.ts';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));

/** `env` without the keys set to '' (how a test unsets a default). */
const withoutBlanks = (env: Record<string, string>) =>
  Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));

export interface Replica {
  url: string;
  child: ChildProcess;
  /** Every stdout line so far (JSON log lines and anything printed). */
  lines: string[];
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** SIGTERM and wait for the exit; SIGKILL if it has not gone after 15 s. */
  stop(): Promise<void>;
}

/**
 * One real control-plane process (plain node on this run's compiled main.js, support/compiled-control.ts)
 * on `databaseUrl`: its own workers, monitor, HTTP server. Resolves once it logs that it listens.
 */
export async function startReplica(databaseUrl: string, env: Record<string, string> = {}): Promise<Replica> {
  const lines: string[] = [];
  const child = spawn(process.execPath, controlEntry('main', 'build'), {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      CONTROL_PORT: '0',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      ...withoutBlanks({ SAGAFLOW_ADMIN_PASSWORD: 'replica admin password', ...env }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let partial = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      const text = partial + d.toString();
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
      for (const line of parts) {
        const m = /"url":"(http:\/\/[^"]+)","msg":"control plane listening"/.exec(line);
        if (m?.[1]) resolve(m[1]);
      }
    });
    void exited.then((e) => reject(new Error(`control plane exited before listening (${e.code}): ${err}`)));
  });
  return {
    url,
    child,
    lines,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** A connection of the test's own to the replicas' database. */
export const sideDatabase = (url: string): Promise<Database> => createDatabase({ kind: 'postgres', url, poolSize: 4 });

/** An operator with `role` and the test password, created straight in the database; its name. */
export async function newOperator(db: Database, role: Role, label: string = role): Promise<string> {
  const name = `${label}-${Math.random().toString(36).slice(2, 10)}`;
  await createOperator(
    db.prisma,
    { name, displayName: `Test ${role}`, role, password: testPassword },
    { id: null, name: 'test', address: null, at: new Date() },
  );
  return name;
}

/** The session cookie (name=value) a sign-in on `url` set; throws if refused. */
export async function cookieFrom(url: string, name: string, password = testPassword): Promise<string> {
  const answer = await rawCall(url, 'auth.signIn', { type: 'mutation', input: { name, password } });
  const setCookie = answer.headers['set-cookie'];
  const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
  if (answer.status !== 200 || cookie === '')
    throw new Error(`sign-in of ${name} at ${url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return cookie;
}

/** The `data` of a tRPC answer (`result.data`), or the whole body when it is an error. */
export const dataOf = <T = Record<string, unknown>>(a: RawAnswer): T =>
  ((a.body as { result?: { data?: unknown } }).result?.data ?? a.body) as T;

/** Starts a demo.reservation run through `url` and waits (polling its status) until it is Waiting. */
export async function waitingRun(db: Database, url: string, cookie: string): Promise<string> {
  const started = await rawCall(url, 'runs.start', {
    type: 'mutation',
    cookie,
    input: { flowName: 'demo.reservation', input: { orderId: Math.random().toString(36).slice(2) } },
  });
  if (started.status !== 200) throw new Error(`runs.start: ${started.status} ${JSON.stringify(started.body)}`);
  const { runId } = dataOf<{ runId: string }>(started);
  for (let i = 0; i < 800; i++) {
    if ((await runStatus(db, runId)) === 'Waiting') return runId;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} never reached Waiting`);
}

export async function runStatus(db: Database, runId: string): Promise<string | undefined> {
  const rows = await db.prisma.$queryRawUnsafe<{ status: string }[]>(
    `select status::text as status from sagaflow.flow_runs where id = $1::uuid`,
    runId,
  );
  return rows[0]?.status;
}
