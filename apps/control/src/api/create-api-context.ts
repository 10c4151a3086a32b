import type { IncomingMessage, ServerResponse } from 'node:http';
import { TRPCError } from '@trpc/server';
import { isNoConnectionInTime, type Database, type Engine } from '@sagaflow/engine';
import type { AuthOptions } from '../auth/auth-options.ts';
import { clientAddress } from '../auth/client-address.ts';
import { resolveSession, type SessionLookup } from '../auth/resolve-session.ts';
import { sessionTokenFrom } from '../auth/session-cookie.ts';
import { resolveBearerToken } from '../auth/tokens/resolve-bearer-token.ts';
import { databaseBusyMessages } from './database-busy.ts';
import type { ApiContext } from './trpc.ts';

/** The token of an `Authorization: Bearer <token>` header; null without one. */
function bearerTokenFrom(header: string | undefined): string | null {
  const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1] ?? (header === undefined ? null : '');
}

/**
 * Builds each request's context: who it is (an `Authorization: Bearer` API token, which wins over
 * any cookie; otherwise the session cookie, checked and touched), its Origin and client address.
 */
export async function createApiContext(
  deps: { engine: Engine; db: Pick<Database, 'prisma'>; auth: AuthOptions },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<ApiContext> {
  const origin = req.headers.origin;
  const address = clientAddress(req, deps.auth.trustedProxies);
  const bearer = bearerTokenFrom(req.headers.authorization);
  let session: SessionLookup;
  try {
    session =
      bearer === null
        ? await resolveSession(deps.db.prisma, deps.auth, sessionTokenFrom(req.headers.cookie))
        : await resolveBearerToken(deps.db.prisma, deps.auth, bearer, address);
  } catch (err) {
    // Who the caller is could not be read: nothing of the call ran (ADR 0130).
    if (!isNoConnectionInTime(err)) throw err;
    res.setHeader('retry-after', '1');
    throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: databaseBusyMessages.nothingDone, cause: err });
  }
  return {
    engine: deps.engine,
    db: deps.db,
    auth: deps.auth,
    session,
    bearer: bearer !== null,
    origin: origin === undefined ? null : origin.replace(/\/+$/, ''),
    address,
    setHeader: (name, value) => {
      const existing = res.getHeader(name);
      if (name.toLowerCase() === 'set-cookie' && existing !== undefined)
        res.setHeader(name, [...(Array.isArray(existing) ? existing : [String(existing)]), value]);
      else res.setHeader(name, value);
    },
  };
}
