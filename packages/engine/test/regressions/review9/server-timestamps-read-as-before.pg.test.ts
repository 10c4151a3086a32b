import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/index.ts';
import { rawOn } from '../../../src/db/run-in-transaction.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * ADR 0046's fast timestamp reading (db/wall-clock-as-utc.ts) was checked against generated texts.
 * Here the texts are the server's own, in the session time zones a host may set (whole hours,
 * half hours, a local mean time with seconds in its offset, the year 1 to 200000, BC, infinity):
 * each must be read to the instant the string parser read it to before (NaN where it read none).
 */
const before = {
  timestamp: (text: string) => new Date(`${text.replace(' ', 'T')}+00:00`),
  timestamptz: (text: string) => new Date(text.replace(' ', 'T').replace(/[+-]\d{2}(:\d{2})?$/, '+00:00')),
};

const values = `
  select t::timestamp as plain, t as zoned, t::timestamp::text as plain_text, t::text as zoned_text
    from unnest(array[
      '2026-12-02 02:03:54+00', '2026-12-02 02:03:54.5+00', '2026-12-02 02:03:54.05+00',
      '2026-12-02 02:03:54.123456+00', '2026-12-02 23:59:59.999999+00', '2026-03-29 01:30:00+00',
      '1900-01-01 00:00:00+00', '1883-11-18 12:00:00+00', '0100-01-01 00:00:00+00', '0099-12-31 23:59:59+00',
      '0001-01-01 00:00:00+00', '9999-12-31 23:59:59.999999+00', '10000-01-01 00:00:00+00',
      '200000-06-30 12:00:00+00', '0044-03-15 12:00:00+00 BC', '4713-01-01 00:00:00+00 BC',
      'infinity', '-infinity', '2000-02-29 24:00:00+00'
    ]::timestamptz[]) t`;

describe('server-printed timestamps through the raw path (PostgreSQL)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('are read to the instant the string parser read them to, in every session time zone', async () => {
    const client = await db.pool!.connect();
    try {
      const read = [];
      for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Europe/Amsterdam', 'America/New_York']) {
        await client.query(`set timezone to '${zone}'`);
        const { rows } = await rawOn(client, { text: values, values: [] });
        for (const row of rows as { plain: Date; zoned: Date; plain_text: string; zoned_text: string }[])
          read.push({
            zone,
            plain: [row.plain_text, row.plain.getTime()],
            zoned: [row.zoned_text, row.zoned.getTime()],
          });
      }
      expect(read.length).toBe(5 * 19);
      expect(read).toEqual(
        read.map(({ zone, plain, zoned }) => ({
          zone,
          plain: [plain[0], before.timestamp(plain[0] as string).getTime()],
          zoned: [zoned[0], before.timestamptz(zoned[0] as string).getTime()],
        })),
      );
    } finally {
      client.release();
    }
  });
});
