import { afterAll, beforeAll } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { startTcpProxy } from '../../support/tcp-proxy.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/** A TCP proxy in front of PostgreSQL that cuts one client's connection right after a statement committed. */
export interface CutAfterCommitProxy {
  /** `url` with its host and port replaced by the proxy's. */
  url: string;
  /**
   * Arms the cut: the next statement whose bytes from the client `match` runs on the server,
   * but nothing of its answer reaches the client; once the server has said ReadyForQuery (it
   * committed: an autocommitted statement ends at the Sync), the client's socket is destroyed. Resolves
   * with the bytes the client sent for it (latin1), once the cut is made.
   */
  cutAfter: (match: (sent: string) => boolean) => Promise<string>;
  close: () => Promise<void>;
}

/** The offset just past the first ReadyForQuery ('Z') among the whole server messages in `data`, or -1. */
function afterReadyForQuery(data: Buffer): number {
  let at = 0;
  while (at + 5 <= data.length) {
    const end = at + 1 + data.readInt32BE(at + 1);
    if (end > data.length) return -1;
    if (data[at] === 0x5a) return end;
    at = end;
  }
  return -1;
}

/**
 * Starts the proxy for `url`. An answer lost after the commit is what a client meets when the
 * network or the server fails at that moment: it cannot tell whether its statement was written. A
 * client sends its next statement only after the previous answer's ReadyForQuery, so the server's
 * bytes after an armed statement start on a message boundary.
 */
export async function startCutAfterCommitProxy(url: string): Promise<CutAfterCommitProxy> {
  let armed: { match: (sent: string) => boolean; done: (sent: string) => void } | undefined;
  const proxy = await startTcpProxy(url, (client, open) => {
    const upstream = open();
    let cutting: { sent: string; answer: Buffer[]; done: (sent: string) => void } | undefined;
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (cutting) cutting.sent += text;
      else if (armed?.match(text)) {
        cutting = { sent: text, answer: [], done: armed.done };
        armed = undefined;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!cutting) return void client.write(chunk);
      cutting.answer.push(chunk);
      if (afterReadyForQuery(Buffer.concat(cutting.answer)) < 0) return;
      client.destroy();
      upstream.destroy();
      cutting.done(cutting.sent);
    });
  });
  return {
    url: proxy.url,
    cutAfter: (match) => new Promise<string>((done) => (armed = { match, done })),
    close: proxy.close,
  };
}

/**
 * For a test file: its database opened directly (`direct`, for the test's own reads) and through a
 * {@link startCutAfterCommitProxy} (`proxied`, for the engine), all three closed after the file.
 */
export function useProxiedDatabase(poolSize: number): {
  direct: () => Database;
  proxy: () => CutAfterCommitProxy;
  proxied: () => Database;
} {
  let direct: (Database & { url?: string }) | undefined;
  let proxy: CutAfterCommitProxy | undefined;
  let proxied: Database | undefined;
  beforeAll(async () => {
    direct = await openTestDatabase();
    proxy = await startCutAfterCommitProxy(direct.url!);
    proxied = await createDatabase({ kind: 'postgres', url: proxy.url, poolSize });
  });
  afterAll(async () => {
    await proxied?.close();
    await proxy?.close();
    await direct?.close();
  });
  const opened = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the proxied database is used before its beforeAll ran');
    return value;
  };
  return { direct: () => opened(direct), proxy: () => opened(proxy), proxied: () => opened(proxied) };
}
