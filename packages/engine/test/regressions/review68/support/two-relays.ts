import { afterAll, beforeAll } from 'vitest';
import { createDatabase } from '../../../../src/db/create-database.ts';
import type { Database } from '../../../../src/db/database.ts';
import { openTestDatabase } from '../../../support/test-database.ts';
import { startTaggedSink } from './tagged-sink.ts';

/** A test database (`admin`), two relays' own pools on it, and the sink that tags each delivery by relay. */
export interface TwoRelays {
  admin: Database & { url?: string };
  relayA: Database;
  relayB: Database;
  sink: Awaited<ReturnType<typeof startTaggedSink>>;
}

/** Opens {@link TwoRelays} before the file's tests and closes them after; the relays' pools are sized by `pools`. */
export function twoRelays(pools: { a: number; b: number }): TwoRelays {
  const s = {} as TwoRelays;
  beforeAll(async () => {
    s.admin = await openTestDatabase({ poolSize: 3 });
    s.relayA = await createDatabase({ kind: 'postgres', url: s.admin.url!, poolSize: pools.a });
    s.relayB = await createDatabase({ kind: 'postgres', url: s.admin.url!, poolSize: pools.b });
    s.sink = await startTaggedSink();
  });
  afterAll(async () => {
    await s.sink?.close();
    await s.relayA?.close();
    await s.relayB?.close();
    await s.admin?.close();
  });
  return s;
}
