import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { startOutboxPublisher } from '../../../src/outbox/start-outbox-publisher.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { compiledEngineScript, compiledEnv } from '../../support/compiled.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { routeTo, rowOf, silent } from './support/relay.ts';
import { startTaggedSink } from './support/tagged-sink.ts';

const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));
// Review 48's relay process: a real startOutboxPublisher posting to the sink URL it is given.
const relayScript = fileURLToPath(new URL('../review48/support/relay-worker.ts', import.meta.url));

/**
 * Review 68, HELD (real PostgreSQL, a real relay process): relay A is stopped (SIGSTOP) in the middle of
 * a source, with one publish out, and stays stopped past its claim window; relay B takes the source and
 * sends it all. When A resumes, its renewal (ADR 0139) finds the rows are no longer its own and A sends
 * none of the rest: a renewal never lets a relay keep sending rows a rival took.
 */
const config = {
  visibility_timeout_seconds: 2,
  publish_timeout_ms: 1_500,
  transaction_timeout_ms: 10_000,
  poll_interval_ms: 50,
  batch_size: 10,
  max_attempts: 10,
  backoff: { base_delay_ms: 20, max_delay_ms: 50 },
};
const rows = 6;

describe('review 68: a relay stopped past its window, then resumed (real PostgreSQL)', () => {
  let admin: Database & { url?: string };
  let relayB: Database;
  let sink: Awaited<ReturnType<typeof startTaggedSink>>;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    admin = await openTestDatabase({ poolSize: 3 });
    relayB = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 2 });
    sink = await startTaggedSink();
  });
  afterAll(async () => {
    if (child?.exitCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    await sink?.close();
    await relayB?.close();
    await admin?.close();
  });

  it('relay A, resumed after relay B took its rows, sends none of them', async () => {
    const ids = await seedOutbox(
      admin,
      Array.from({ length: rows }, () => ({ sourceId: 'r68-stalled', destination: 'sink' })),
    );
    const [, second] = ids;
    let stoppedAt = 0;
    sink.setAnswer(async (d) => {
      if (d.by === 'a' && d.messageId === second && stoppedAt === 0) {
        // Relay A is stopped with this publish out; the answer waits in its socket.
        child!.kill('SIGSTOP');
        stoppedAt = Date.now();
      }
      return 200;
    });
    const logs: Record<string, unknown>[] = [];
    child = spawn(
      process.execPath,
      [compiledEngineScript(relayScript), admin.url!, sink.url('a'), JSON.stringify(config)],
      { cwd: repoRoot, env: { ...compiledEnv(), R48_LOG: 'debug' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
    });
    await waitFor('relay A to be stopped with its second row out', async () => (stoppedAt > 0 ? true : undefined));
    const windowEnds = (await rowOf(admin, second!)).available_at.getTime();
    const b = startOutboxPublisher({ db: relayB, routes: routeTo(sink.url('b')), config, logger: silent });
    try {
      await waitFor('relay B to publish the source', async () => {
        const n = await admin.prisma.outboxMessage.count({ where: { source_id: 'r68-stalled', status: 'Pending' } });
        return n === 0 ? true : undefined;
      });
    } finally {
      await b.stop();
    }
    const aBeforeResume = sink.deliveries.filter((d) => d.by === 'a').length;
    const resumedAt = Date.now();
    child.kill('SIGCONT');
    // Progress: relay A's pass over the source ends (its debug line), whatever it decided.
    await waitFor('relay A to end its pass', async () =>
      logs.some((l) => l.msg === 'outbox pass' && Number(l.claimed) === rows) ? true : undefined,
    );
    const aAfterResume = sink.deliveries.filter((d) => d.by === 'a' && d.at >= resumedAt).map((d) => d.messageId);
    const bSent = sink.deliveries.filter((d) => d.by === 'b').map((d) => d.messageId);
    const statuses = await Promise.all(ids.map(async (id) => (await rowOf(admin, id)).status));
    const seen = {
      stoppedMsPastWindow: resumedAt - windowEnds,
      aBeforeResume,
      aAfterResume,
      bSentInOrder: bSent.join() === ids.join(),
      statuses,
    };
    expect(seen, JSON.stringify({ ...seen, pass: logs.find((l) => l.msg === 'outbox pass') })).toMatchObject({
      aBeforeResume: 2,
      aAfterResume: [],
      bSentInOrder: true,
      statuses: ids.map(() => 'Published'),
    });
    expect(seen.stoppedMsPastWindow).toBeGreaterThan(0);
  });
});
