import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Database } from '../../../../src/index.ts';
import { compiledEngineScript, compiledEnv } from '../../../support/compiled.ts';

const repoRoot = fileURLToPath(new URL('../../../../../../', import.meta.url));
const relayScript = fileURLToPath(new URL('./relay-worker.ts', import.meta.url));

export interface Delivery {
  messageId: string;
  at: number;
  /** The row's status when the sink read it, before answering: `Published` = sent again after its mark. */
  statusSeen: string | null;
}

/**
 * A real HTTP sink: records every POST with its message id, reads the row's status from the database before
 * answering (so a delivery of a row already marked Published is seen), and answers 500 for `poison` ids.
 */
export async function startSink(db: Database, poison: (messageId: string) => boolean) {
  const deliveries: Delivery[] = [];
  /** While `holding`, requests are recorded but not answered: delivered, not acknowledged. */
  const hold = { holding: false, held: [] as (() => void)[] };
  const server: Server = createServer((req, res) => {
    const messageId = decodeURIComponent(String(req.headers['x-sagaflow-message-id'] ?? ''));
    req.resume();
    req.on('end', () => {
      void (async () => {
        let statusSeen: string | null;
        try {
          const rows = await db.prisma.$queryRaw<{ status: string }[]>`
            select status from "sagaflow"."outbox" where message_id = ${messageId}`;
          statusSeen = rows[0]?.status ?? null;
        } catch {
          statusSeen = 'unknown';
        }
        deliveries.push({ messageId, at: Date.now(), statusSeen });
        if (poison(messageId)) {
          res.writeHead(500).end('poison');
          return;
        }
        if (hold.holding) {
          hold.held.push(() => res.writeHead(200).end('ok'));
          return;
        }
        res.writeHead(200).end('ok');
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    hold,
    /** Answers every held request and stops holding. */
    release: () => {
      hold.holding = false;
      for (const answer of hold.held.splice(0)) answer();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Seeds `sources × perSource` rows in one statement, each source's rows in `n` order (so in `seq` order). */
export async function seedMany(db: Database, opts: { sources: number; perSource: number; prefix: string }) {
  await db.prisma.$executeRaw`
    insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload)
    select gen_random_uuid(), ${opts.prefix} || '-' || s || '-' || n, 'process', ${opts.prefix} || '-src-' || s,
           'Command', 'sink', jsonb_build_object('n', n)
      from generate_series(1, ${opts.perSource}::int) n, generate_series(1, ${opts.sources}::int) s
     order by n, s`;
}

export interface RelayPool {
  start(i: number): Promise<void>;
  kill(i: number): void;
  killAll(): void;
}

export function relayPool(url: string, sinkUrl: string, config: object): RelayPool {
  const relays: (ChildProcess | null)[] = [];
  return {
    start: (i) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [compiledEngineScript(relayScript), url, sinkUrl, JSON.stringify(config)],
          {
            cwd: repoRoot,
            env: compiledEnv(),
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        relays[i] = child;
        child.stdout.once('data', () => resolve());
        child.once('exit', (code, signal) => {
          if (relays[i] === child) relays[i] = null;
          if (code !== null && code !== 0) reject(new Error(`relay ${i} exited with ${code} (${signal})`));
          else resolve();
        });
      }),
    kill: (i) => {
      relays[i]?.kill('SIGKILL');
      relays[i] = null;
    },
    killAll: () => {
      for (const r of relays) r?.kill('SIGKILL');
    },
  };
}

/** Per source, the message ids in `seq` order. */
export async function orderBySource(db: Database) {
  const rows = await db.prisma.$queryRaw<{ source_id: string; message_id: string }[]>`
    select source_id, message_id from "sagaflow"."outbox" order by source_id, seq`;
  const bySource = new Map<string, string[]>();
  const sourceOf = new Map<string, string>();
  for (const r of rows) {
    bySource.set(r.source_id, [...(bySource.get(r.source_id) ?? []), r.message_id]);
    sourceOf.set(r.message_id, r.source_id);
  }
  return { bySource, sourceOf };
}

/** Sources whose first deliveries did not come in `seq` order, with what the sink saw. */
export function outOfOrder(deliveries: Delivery[], bySource: Map<string, string[]>, sourceOf: Map<string, string>) {
  const firstSeen = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const d of deliveries) {
    if (seen.has(d.messageId)) continue;
    seen.add(d.messageId);
    const s = sourceOf.get(d.messageId) ?? '?';
    firstSeen.set(s, [...(firstSeen.get(s) ?? []), d.messageId]);
  }
  const bad: { source: string; expected: string[]; got: string[] }[] = [];
  for (const [source, got] of firstSeen) {
    const expected = (bySource.get(source) ?? []).slice(0, got.length);
    if (expected.join() !== got.join()) bad.push({ source, expected, got });
  }
  return bad;
}

export async function statusCounts(db: Database) {
  const rows = await db.prisma.$queryRaw<{ status: string; n: number }[]>`
    select status, count(*)::int as n from "sagaflow"."outbox" group by status`;
  return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>;
}

/** Waits until `done()` holds; fails only if `moved()` reports nothing new for `stallMs`. */
export async function untilDone(opts: {
  done: () => Promise<boolean>;
  moved: () => number;
  stallMs: number;
  tick?: () => Promise<void>;
}) {
  let last = -1;
  let movedAt = Date.now();
  for (;;) {
    if (await opts.done()) return true;
    const now = opts.moved();
    if (now !== last) {
      last = now;
      movedAt = Date.now();
    }
    if (Date.now() - movedAt > opts.stallMs) return false;
    await opts.tick?.();
    await new Promise((r) => setTimeout(r, 200));
  }
}
