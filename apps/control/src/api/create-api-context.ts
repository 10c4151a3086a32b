import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database, Engine } from '@sagaflow/engine';
import type { AuthOptions } from '../auth/auth-options.ts';
import { clientAddress } from '../auth/client-address.ts';
import { resolveSession } from '../auth/resolve-session.ts';
import { sessionTokenFrom } from '../auth/session-cookie.ts';
import type { ApiContext } from './trpc.ts';

/** Builds each request's context: its session (checked and touched), Origin and client address. */
export async function createApiContext(
  deps: { engine: Engine; db: Pick<Database, 'prisma'>; auth: AuthOptions },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<ApiContext> {
  const origin = req.headers.origin;
  return {
    engine: deps.engine,
    db: deps.db,
    auth: deps.auth,
    session: await resolveSession(deps.db.prisma, deps.auth, sessionTokenFrom(req.headers.cookie)),
    origin: origin === undefined ? null : origin.replace(/\/+$/, ''),
    address: clientAddress(req, deps.auth.trustedProxies),
    setHeader: (name, value) => {
      const existing = res.getHeader(name);
      if (name.toLowerCase() === 'set-cookie' && existing !== undefined)
        res.setHeader(name, [...(Array.isArray(existing) ? existing : [String(existing)]), value]);
      else res.setHeader(name, value);
    },
  };
}
