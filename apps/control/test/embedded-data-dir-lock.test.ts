import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compiledControlFile, controlEntry } from './support/compiled-control.ts';
import { apiClient, rejection, signInCookie, testPassword } from './support/test-plane.ts';
import { migratedDataDir } from './support/migrated-data-dir.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));

interface Exit {
  code: number | null;
  signal: string | null;
  out: string;
  err: string;
}

/**
 * Starts a real process (plain node on this run's compiled `main.js` or `cli.js`, support/compiled-control.ts:
 * its pid is the one that holds the lock) and collects its output.
 */
function start(entry: 'main' | 'cli', args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [...controlEntry(entry, 'build'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, out, err })),
  );
  return { child, exited };
}

/** A real control plane on an embedded data directory; resolves its URL once it listens. */
function controlPlane(dataDir: string) {
  const p = start('main', [], {
    CONTROL_PORT: '0',
    SAGAFLOW_DATA_DIR: dataDir,
    SAGAFLOW_ADMIN_PASSWORD: testPassword,
  });
  const listening = new Promise<string>((resolve, reject) => {
    let buffered = '';
    p.child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const m = /"url":"(http:\/\/[^"]+)","msg":"control plane listening"/.exec(buffered);
      if (m?.[1]) resolve(m[1]);
    });
    void p.exited.then((e) => reject(new Error(`control plane exited before listening (${e.code}): ${e.err}`)));
  });
  listening.catch(() => undefined);
  return { ...p, listening };
}

/** A client signed in as the first admin of the control plane at `url`. */
const adminClient = async (url: string) => apiClient(url, await signInCookie(url, 'admin'));

/** The operator CLI on the same data directory, with a CONTROL_PORT that is not the plane's. */
const cli = (dataDir: string, ...args: string[]) =>
  start('cli', args, { SAGAFLOW_DATA_DIR: dataDir, CONTROL_PORT: '1', LOG_LEVEL: 'silent' }).exited;

/** Polls until `check` answers; the test's own timeout is the only deadline (a loaded machine is slow). */
const until = async <T>(check: () => Promise<T | undefined>): Promise<T> => {
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
};

// PGlite directories are created and migrated on first start: seconds when idle, a minute or more loaded.
const slow = 600_000;

describe('one process owns an embedded data directory: control planes and the CLI (issue 13, item 10)', () => {
  it(
    "a second control plane (another port) and the CLI are refused naming the holder's pid; the first keeps serving, and its clean stop frees the directory at once",
    async () => {
      const dataDir = await migratedDataDir('owner');
      const first = controlPlane(dataDir);
      const url = await first.listening;
      const pid = first.child.pid;
      const api = await adminClient(url);
      const { runId } = await api.runs.start.mutate({
        flowName: 'demo.order',
        input: { orderId: 'held', amount: 5 },
        businessKey: 'order-held',
      });

      const intruder = controlPlane(dataDir);
      const opened = await Promise.race([intruder.listening.then(() => true), intruder.exited.then(() => false)]);
      if (opened) intruder.child.kill('SIGKILL');
      expect(opened, 'a second control plane started on the held directory').toBe(false);
      const second = await intruder.exited;
      expect(second.code).toBe(1);
      expect(second.err).toMatch(
        /^sagaflow control: SAGAFLOW_DATA_DIR: data directory .* is in use by pid \d+ on host /,
      );
      expect(second.err).toContain(`pid ${pid} on host`);
      // The holder's command line: the compiled main.js it runs (was apps/control/src/main.ts under tsx).
      expect(second.err).toContain(compiledControlFile('main'));
      expect(second.out).not.toContain('control plane listening');

      const sweep = await cli(dataDir, 'monitor', 'sweep');
      expect(sweep.code).toBe(1);
      expect(sweep.err).toMatch(/data_dir_locked|in use by pid/);
      expect(sweep.err).toContain(`pid ${pid} on host`);
      expect(sweep.out).toBe('');

      // Over HTTP with an operator token, the CLI reads and repairs while the control plane holds the directory.
      const { token } = await api.tokens.create.mutate({ name: 'embedded' });
      const overHttp = (...args: string[]) =>
        start('cli', args, { SAGAFLOW_URL: url, SAGAFLOW_TOKEN: token, LOG_LEVEL: 'silent' }).exited;
      const shown = await overHttp('run', 'show', runId);
      expect(shown.err).toBe('');
      expect(shown.code).toBe(0);
      expect(shown.out).toContain(`run ${runId}  demo.order@1`);
      await until(async () => ((await api.runs.get.query({ id: runId })).run.finishedAt ? true : undefined));
      const finished = await overHttp('kick', runId, '--reason', 'late');
      expect(finished.code).toBe(2);
      expect(finished.err).toContain('a finished run is never changed; nothing was sent');

      // The first still owns and serves its data: the run, its business key, new work.
      expect((await api.runs.get.query({ id: runId })).run.id).toBe(runId);
      expect(
        await rejection(
          api.runs.start.mutate({
            flowName: 'demo.order',
            input: { orderId: 'held', amount: 5 },
            businessKey: 'order-held',
          }),
        ),
      ).toMatchObject({ status: 409 });
      const later = await api.runs.start.mutate({ flowName: 'demo.order', input: { orderId: 'later', amount: 1 } });
      await until(async () =>
        (await api.runs.get.query({ id: later.runId })).run.status === 'Completed' ? true : undefined,
      );
      expect((await fetch(`${url}/healthz`)).status).toBe(200);

      first.child.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      // No stale window to wait out after a clean stop: the CLI opens the directory at once.
      const afterStop = await cli(dataDir, 'monitor', 'sweep');
      expect(afterStop.err).toBe('');
      expect(afterStop.code).toBe(0);
      expect(JSON.parse(afterStop.out)).toMatchObject({ swept: true });
    },
    slow,
  );

  it(
    'after a SIGKILL of the holder, the next control plane takes the directory over and sees every run committed before, its business keys still unique',
    async () => {
      const dataDir = await migratedDataDir('owner');
      const killed = controlPlane(dataDir);
      const before = await adminClient(await killed.listening);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const { runId } = await before.runs.start.mutate({
          flowName: 'demo.order',
          input: { orderId: `k-${i}`, amount: i + 1 },
          businessKey: `order-k-${i}`,
        });
        ids.push(runId);
      }
      killed.child.kill('SIGKILL');
      expect((await killed.exited).signal).toBe('SIGKILL');

      const next = controlPlane(dataDir);
      const api = await adminClient(await next.listening);
      try {
        for (const id of ids) expect((await api.runs.get.query({ id })).run.id).toBe(id);
        const listed = (await api.runs.list.query({ limit: 500 })).map((r) => r.id);
        expect(listed).toEqual(expect.arrayContaining(ids));
        expect(
          await rejection(
            api.runs.start.mutate({
              flowName: 'demo.order',
              input: { orderId: 'k-0', amount: 1 },
              businessKey: 'order-k-0',
            }),
          ),
        ).toMatchObject({ status: 409 });
      } finally {
        next.child.kill('SIGTERM');
        expect((await next.exited).code).toBe(0);
      }
    },
    slow,
  );
});
