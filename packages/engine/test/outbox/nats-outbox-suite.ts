import { jetstreamManager, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServer } from '@sagaflow/test-nats';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { clearOutbox } from './seed-outbox.ts';

/** What a NATS outbox suite works with; its fields are set in beforeAll / beforeEach, so read them in tests. */
export interface NatsOutboxSuite {
  server: NatsServer;
  nc: NatsConnection;
  jsm: JetStreamManager;
  db: Database;
  /** A fresh clock for each test, a second ahead of the wall clock (seeded rows are due). */
  clock: TestClock;
}

/**
 * A real nats-server, a connection and its JetStream manager, and the test database; before each test
 * an empty outbox and one stream `SAGAFLOW` on `sagaflow.>` (with `stream`'s extra settings).
 */
export function useNatsOutbox(stream: Partial<StreamConfig> = {}): NatsOutboxSuite {
  const suite = {} as NatsOutboxSuite;
  beforeAll(async () => {
    suite.server = await startNatsServer();
    suite.nc = await connect({ servers: suite.server.url });
    suite.jsm = await jetstreamManager(suite.nc);
    suite.db = await openTestDatabase();
  });
  afterAll(async () => {
    await suite.db?.close();
    await suite.nc?.close();
    await suite.server?.stop();
  });
  beforeEach(async () => {
    await clearOutbox(suite.db);
    for await (const name of suite.jsm.streams.names()) await suite.jsm.streams.delete(name);
    await suite.jsm.streams.add({ name: 'SAGAFLOW', subjects: ['sagaflow.>'], ...stream });
    suite.clock = new TestClock(new Date(Date.now() + 1000));
  });
  return suite;
}

/** Every message of `stream`, in stream order, as (subject, Nats-Msg-Id, body). */
export async function readStream(jsm: JetStreamManager, stream: string) {
  const info = await jsm.streams.info(stream);
  const out: { subject: string; msgId: string | undefined; body: { messageId: string; sourceId: string } }[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq });
    if (m === null) continue;
    out.push({ subject: m.subject, msgId: m.header.get('Nats-Msg-Id'), body: m.json() });
  }
  return out;
}
