import { request, type IncomingMessage } from 'node:http';
import { createTestOperator, signInCookie, testDatabaseUrl } from './test-plane.ts';
import { parseEnv } from '../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../src/start-control-plane.ts';

/** The document as the download wrote it before it streamed: one JSON.stringify of the whole, bigints as strings. */
export const wholeDocument = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);

export interface HistoryPlane {
  plane: ControlPlane;
  databaseUrl: string;
  /** A viewer's session cookie: what a download needs. */
  cookie: string;
  query: ControlPlane['db']['driver']['query'];
  /** A Completed run of `flowName` with no rows of its own yet; its id. */
  completedRun: (flowName: string) => Promise<string>;
}

/**
 * A control plane in this process on a database of its own (named after `label`), silent, with its
 * stuck-run monitor out of the way, and a viewer signed in: what the history download tests seed
 * through and download from.
 */
export async function historyPlane(label: string, env: Record<string, string> = {}): Promise<HistoryPlane> {
  const databaseUrl = await testDatabaseUrl(label);
  const plane = await startControlPlane(
    parseEnv({
      DATABASE_URL: databaseUrl,
      CONTROL_PORT: '0',
      LOG_LEVEL: 'silent',
      SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
      ...env,
    }),
  );
  const cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
  const query = plane.db.driver.query.bind(plane.db.driver);
  const completedRun = async (flowName: string) =>
    (
      await query<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
         values ($1, 1, 'Completed', '{}'::jsonb, now(), now()) returning id::text as id`,
        [flowName],
      )
    )[0]!.id;
  return { plane, databaseUrl, cookie, query, completedRun };
}

/** GET `url` with `cookie`; the response once its headers are in, the client reading nothing of the body yet. */
export function openPaused(url: string, cookie: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { cookie } }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A response read so far: its bytes are kept as they arrive. */
export interface PausedDownload {
  res: IncomingMessage;
  chunks: Buffer[];
}

/**
 * GET `url`, paused (the client reads no further) once `seen` has arrived, the bytes received so far
 * kept. Rejects if the response ends before `seen` arrives.
 */
export function openPausedAt(url: string, cookie: string, seen: string): Promise<PausedDownload> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { cookie } }, (res) => {
      const chunks: Buffer[] = [];
      let text = '';
      const onData = (b: Buffer) => {
        chunks.push(b);
        if (text.length < 1_000_000) text += b.toString('latin1');
        if (text.includes(seen)) {
          res.pause();
          res.off('data', onData);
          resolve({ res, chunks });
        }
      };
      res.on('data', onData);
      res.on('error', reject);
      res.on('close', () => reject(new Error(`the download ended before ${JSON.stringify(seen)} arrived`)));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The whole of a download as it ended: its bytes, and whether the transfer broke before its end. */
export interface DownloadEnd {
  bytes: Buffer;
  body: string;
  broken: boolean;
}

/** Reads the rest of a response (paused or not) to its end or its break. */
export function readRest(res: IncomingMessage, chunks: Buffer[] = []): Promise<DownloadEnd> {
  return new Promise((resolve) => {
    let broken = false;
    res.on('data', (b: Buffer) => chunks.push(b));
    res.on('aborted', () => (broken = true));
    res.on('error', () => (broken = true));
    res.on('close', () => {
      const bytes = Buffer.concat(chunks);
      resolve({ bytes, body: bytes.toString('utf8'), broken: broken || !res.complete });
    });
    res.resume();
  });
}

/** `body` parsed, or null if it is not one JSON document. */
export function parsedOrNull(body: string): Record<string, unknown[]> | null {
  try {
    return JSON.parse(body) as Record<string, unknown[]>;
  } catch {
    return null;
  }
}
