import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { getSignup } from './get-signup.ts';
import { toErrorResponse } from './http-status.ts';
import { readJsonBody } from './read-json-body.ts';
import { ServiceError } from './service-error.ts';
import type { JsonReply, SignupDeps } from './signup-deps.ts';
import { startSignup } from './start-signup.ts';
import { verifySignup } from './verify-signup.ts';

/** A malformed escape stays as it is; the handler then finds no such signup. */
const decodeSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

type Route = { method: string; handle: (req: IncomingMessage, params: string[]) => Promise<JsonReply> };

/** The service's routes, on Node's own http module: no framework. */
export function createRequestHandler(deps: SignupDeps & { logger: Logger }) {
  const routes: [RegExp, Route[]][] = [
    [/^\/healthz$/, [{ method: 'GET', handle: async () => ({ status: 200, body: { status: 'ok' } }) }]],
    [/^\/signups$/, [{ method: 'POST', handle: async (req) => startSignup(deps, await readJsonBody(req)) }]],
    [/^\/signups\/([^/]+)$/, [{ method: 'GET', handle: async (_req, [id = '']) => getSignup(deps, id) }]],
    [/^\/signups\/([^/]+)\/verify$/, [{ method: 'POST', handle: async (_req, [id = '']) => verifySignup(deps, id) }]],
  ];

  const route = async (req: IncomingMessage): Promise<JsonReply> => {
    const path = new URL(req.url ?? '/', 'http://service').pathname;
    for (const [pattern, handlers] of routes) {
      const match = pattern.exec(path);
      if (!match) continue;
      const handler = handlers.find((h) => h.method === req.method);
      if (!handler) {
        const allow = handlers.map((h) => h.method).join(', ');
        const err = new ServiceError('method_not_allowed', `${req.method ?? '?'} ${path} is not allowed; use ${allow}`);
        return { ...toErrorResponse(err), headers: { allow } };
      }
      return handler.handle(req, match.slice(1).map(decodeSegment));
    }
    throw new ServiceError('not_found', `no route ${path}`);
  };

  return (req: IncomingMessage, res: ServerResponse): void => {
    route(req)
      .catch((err: unknown): JsonReply => {
        const reply = toErrorResponse(err);
        if (reply.status >= 500) deps.logger.error({ err, method: req.method, url: req.url }, 'request failed');
        return reply;
      })
      .then((reply) => {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(JSON.stringify(reply.body));
      })
      .catch((err: unknown) => deps.logger.error({ err }, 'could not write the response'));
  };
}
