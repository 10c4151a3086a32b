import { describe, expect, it } from 'vitest';
import { refusedByServer } from './refused-by-server.ts';

describe('refusedByServer', () => {
  it("is true only for the server's ERROR, after which nothing of an autocommitted statement was written", () => {
    expect(refusedByServer(Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' }))).toBe(true);
    // A terminated session, a lost socket, a failure on the client: whether it committed is unknown.
    expect(
      refusedByServer(Object.assign(new Error('terminating connection'), { code: '57P01', severity: 'FATAL' })),
    ).toBe(false);
    expect(refusedByServer(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(refusedByServer(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    expect(refusedByServer(undefined)).toBe(false);
  });
});
