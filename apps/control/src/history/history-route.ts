import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from '@sagaflow/engine';
import type { Logger } from 'pino';
import type { AuthOptions } from '../auth/auth-options.ts';
import { resolveSession } from '../auth/resolve-session.ts';
import { roleAllows } from '../auth/roles.ts';
import { sessionTokenFrom } from '../auth/session-cookie.ts';
import { hostAllowed } from '../http/host-allowed.ts';
import { readInstanceHistory } from './read-instance-history.ts';
import { readRunHistory } from './read-run-history.ts';

/** The path a history download is served at: `/history/runs/<id>` or `/history/instances/<id>`. */
export const historyPath = /^\/history\/(runs|instances)\/([^/?#]*)(?:[?#].*)?$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** JSON.stringify that writes bigint ids and sequences as strings (JSON has no 64-bit integers). */
const toJson = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);

function answer(res: ServerResponse, status: number, error: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ error }));
}

/**
 * GET /history/runs/<id> and /history/instances/<id>: a run's or an instance's whole history as a
 * JSON attachment, for the console's "Download history (JSON)" link. Behind the same checks as the
 * API: a Host this server answers to, a session (401 without), the viewer role. A read, so no
 * Origin check; nothing is written but the session's touch.
 */
export function createHistoryRoute(deps: { db: Pick<Database, 'prisma'>; auth: AuthOptions; logger: Logger }) {
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
      const history = kind === 'run' ? await readRunHistory(deps.db, id) : await readInstanceHistory(deps.db, id);
      if (!history) return answer(res, 404, `${kind} ${id} does not exist`);
      const body = toJson({ exportedAt: deps.auth.now().toISOString(), ...history });
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-disposition': `attachment; filename="${kind}-${id}.json"`,
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      deps.logger.error({ err, kind, id }, 'history download failed');
      answer(res, 500, 'internal error reading the history; see the control plane log');
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
