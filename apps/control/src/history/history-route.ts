import type { IncomingMessage, ServerResponse } from 'node:http';
import { isNoConnectionInTime, type Database } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { databaseBusyMessages } from '../api/database-busy.ts';
import type { AuthOptions } from '../auth/auth-options.ts';
import { resolveSession } from '../auth/resolve-session.ts';
import { roleAllows } from '../auth/roles.ts';
import { sessionTokenFrom } from '../auth/session-cookie.ts';
import { hostAllowed } from '../http/host-allowed.ts';
import { HistoryShrank } from './history-pages.ts';
import { ClientStalled, writeHistory } from './write-history.ts';
import { readInstanceHistory } from './read-instance-history.ts';
import { readRunHistory } from './read-run-history.ts';

/** The path a history download is served at: `/history/runs/<id>` or `/history/instances/<id>`. */
export const historyPath = /^\/history\/(runs|instances)\/([^/?#]*)(?:[?#].*)?$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function answer(res: ServerResponse, status: number, error: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ error }));
}

/**
 * GET /history/runs/<id> and /history/instances/<id>: a run's or an instance's whole history as a
 * JSON attachment, for the console's "Download history (JSON)" link, streamed in keyset pages with
 * backpressure so the server holds a page of rows whatever the history's length (ADR 0115). Behind the same checks as the
 * API: a Host this server answers to, a session (401 without), the viewer role. A read, so no
 * Origin check; nothing is written but the session's touch.
 */
export function createHistoryRoute(deps: {
  db: Pick<Database, 'prisma'>;
  auth: AuthOptions;
  logger: Logger;
  /** The most downloads streamed at once (SAGAFLOW_HISTORY_DOWNLOADS_MAX); another is a 503. */
  maxDownloads: number;
  /** How long a client may read nothing before its download is closed (SAGAFLOW_HISTORY_DOWNLOAD_STALL_SECONDS). */
  stallMs: number;
}) {
  let downloads = 0;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host, deps.auth.allowedHosts))
      return answer(res, 403, `this server does not answer to host ${JSON.stringify(req.headers.host ?? '')}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return answer(res, 405, 'a history is downloaded with GET');
    }
    const match = historyPath.exec(req.url ?? '');
    const kind = match?.[1] === 'instances' ? 'instance' : 'run';
    let id = match?.[2] ?? '';
    let started = false;
    let holding = false;
    try {
      const session = await resolveSession(deps.db.prisma, deps.auth, sessionTokenFrom(req.headers.cookie));
      if (session.state !== 'active')
        return answer(res, 401, session.state === 'ended' ? 'your session has ended; sign in again' : 'sign in first');
      if (!roleAllows(session.operator.role, 'viewer'))
        return answer(res, 403, `this needs the viewer role; ${session.operator.name} is ${session.operator.role}`);
      const decoded = decodedOrNull(id)?.toLowerCase() ?? null;
      if (decoded === null || !uuid.test(decoded))
        return answer(res, 400, `${kind} id: not a UUID (${JSON.stringify(id.slice(0, 80))})`);
      id = decoded;
      if (downloads >= deps.maxDownloads) {
        res.setHeader('retry-after', '10');
        return answer(
          res,
          503,
          `this control plane is already streaming ${deps.maxDownloads} history downloads (SAGAFLOW_HISTORY_DOWNLOADS_MAX); try again shortly`,
        );
      }
      downloads += 1;
      holding = true;
      const history = kind === 'run' ? await readRunHistory(deps.db, id) : await readInstanceHistory(deps.db, id);
      if (!history) return answer(res, 404, `${kind} ${id} does not exist`);
      // Streamed (ADR 0115): no content-length; the body is written page by page as the client reads it.
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-disposition': `attachment; filename="${kind}-${id}.json"`,
        'cache-control': 'no-store',
      });
      if (req.method === 'HEAD') return void res.end();
      started = true;
      await writeHistory(res, deps.auth.now(), history, deps.stallMs);
    } catch (err) {
      if (err instanceof ClientStalled)
        deps.logger.warn(
          { kind, id, stallSeconds: err.stallMs / 1000 },
          'history download closed: its client read nothing for the stall limit (SAGAFLOW_HISTORY_DOWNLOAD_STALL_SECONDS); it may download it again',
        );
      else if (err instanceof HistoryShrank)
        deps.logger.warn(
          { kind, id, section: err.section, reason: err.message },
          'history download cut: rows were deleted while it was written (retention?); the client may download it again',
        );
      else if (isNoConnectionInTime(err))
        deps.logger.warn({ err, kind, id }, 'history download refused: no database connection in time (pool busy)');
      else deps.logger.error({ err, kind, id }, 'history download failed');
      // Before the first byte a proper 500; after it the status is sent, so the connection is cut
      // before the chunked body's end: the client sees a broken download, never a short document.
      if (started || res.headersSent) res.destroy();
      else if (isNoConnectionInTime(err)) {
        // Nothing was read: the client may simply ask again (ADR 0130).
        res.setHeader('retry-after', '1');
        answer(res, 503, databaseBusyMessages.nothingDone);
      } else answer(res, 500, 'internal error reading the history; see the control plane log');
    } finally {
      if (holding) downloads -= 1;
    }
  };
}

/** The path segment decoded, or null when its percent-encoding is malformed (`%E0%A4%A`). */
function decodedOrNull(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
