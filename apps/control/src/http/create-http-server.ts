import { createServer, type Server } from 'node:http';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import type { Database, Engine } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { appRouter } from '../api/app-router.ts';
import { createApiContext } from '../api/create-api-context.ts';
import type { AuthOptions } from '../auth/auth-options.ts';

/** Serves the tRPC API under /trpc and health under /healthz. */
export function createHttpServer(deps: {
  engine: Engine;
  db: Pick<Database, 'prisma'>;
  logger: Logger;
  auth: AuthOptions;
  isReady: () => boolean;
}): Server {
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: '/trpc/',
    createContext: ({ req, res }) => createApiContext(deps, req, res),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') deps.logger.error({ err: error, path }, 'api error');
    },
  });
  return createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/healthz' || url.startsWith('/healthz?')) {
      const ready = deps.isReady();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ready ? 'ok' : 'starting' }));
      return;
    }
    if (url.startsWith('/trpc/')) {
      trpc(req, res);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: `no route ${url}; the API is under /trpc/ and health under /healthz` }));
  });
}
