import { initTRPC, TRPCError } from '@trpc/server';
import { EngineError, isNoConnectionInTime, type Database, type Engine } from '@sagaflow/engine';
import type { AuthOptions } from '../auth/auth-options.ts';
import type { SessionLookup } from '../auth/resolve-session.ts';
import { roleAllows, type Role } from '../auth/roles.ts';
import { databaseBusyMessages } from './database-busy.ts';
import { apiCodeFor } from './error-codes.ts';
import { formatApiError } from './format-api-error.ts';

export interface ApiContext {
  engine: Engine;
  /** The control plane's database, for reads outside the engine's own (the outbox's figures). */
  db: Pick<Database, 'prisma'>;
  auth: AuthOptions;
  /** Who the request is: the session its cookie opens, or the operator of its bearer token. */
  session: SessionLookup;
  /** The request carried an `Authorization` header: its cookie, if any, is not used. */
  bearer: boolean;
  /** The request's Origin header (a browser sends it on every POST), or null. */
  origin: string | null;
  /** The client's address (behind the console: the address the console saw). */
  address: string | null;
  setHeader: (name: string, value: string) => void;
}

/** Who may call a procedure: anyone (`public`: signing in), or an operator with at least this role. */
export interface ApiMeta {
  role: Role | 'public';
}

const t = initTRPC.context<ApiContext>().meta<ApiMeta>().create({ errorFormatter: formatApiError, isDev: false });

/**
 * Engine errors leave the API with the code the table maps them to, and their own message. A call that
 * got no database connection in time is a 503 with Retry-After, saying what was done (ADR 0130).
 */
const mapEngineErrors = t.middleware(async ({ ctx, type, next }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause;
  if (cause instanceof EngineError)
    throw new TRPCError({ code: apiCodeFor[cause.code], message: cause.message, cause });
  if (isNoConnectionInTime(cause) || isNoConnectionInTime(result.error)) {
    ctx.setHeader('retry-after', '1');
    throw new TRPCError({
      code: 'SERVICE_UNAVAILABLE',
      message: databaseBusyMessages[type === 'query' ? 'nothingDone' : 'commandStopped'],
      cause: result.error,
    });
  }
  return result;
});

/**
 * CSRF: the session cookie is SameSite=Strict, and a mutation whose Origin is not an allowed one is
 * refused before anything runs (a client that sends no Origin is no browser; its cookie is its own).
 * A bearer request is exempt: its credential is a header no other site's page can make a browser
 * send, and its cookie is ignored (ADR 0021).
 */
const refuseForeignOrigin = t.middleware(({ ctx, type, next }) => {
  if (type === 'mutation' && !ctx.bearer && ctx.origin !== null && !ctx.auth.allowedOrigins.has(ctx.origin))
    throw new TRPCError({ code: 'FORBIDDEN', message: `requests from origin ${ctx.origin} are not accepted` });
  return next();
});

const base = t.procedure.use(mapEngineErrors).use(refuseForeignOrigin);

const requireRole = (role: Role) =>
  t.middleware(({ ctx, next }) => {
    const { session } = ctx;
    if (session.state === 'refused') {
      if (session.retryAfterSeconds !== null) {
        ctx.setHeader('retry-after', String(session.retryAfterSeconds));
        throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: session.message });
      }
      throw new TRPCError({ code: 'UNAUTHORIZED', message: session.message });
    }
    if (session.state !== 'active')
      throw new TRPCError({
        code: 'UNAUTHORIZED',
        message: session.state === 'ended' ? 'your session has ended; sign in again' : 'sign in first',
      });
    if (!roleAllows(session.operator.role, role))
      throw new TRPCError({
        code: 'FORBIDDEN',
        message: `this needs the ${role} role; ${session.operator.name} is ${session.operator.role}`,
      });
    return next({ ctx: { ...ctx, session } });
  });

/** The context a role-checked procedure runs with: its session is known to be active. */
export type SignedInContext = ApiContext & { session: Extract<SessionLookup, { state: 'active' }> };

export const router = t.router;
/** No session needed: signing in and asking who one is. Every other procedure names its role. */
export const publicProcedure = base.meta({ role: 'public' });
/** Reads: any signed-in operator. */
export const viewerProcedure = base.meta({ role: 'viewer' }).use(requireRole('viewer'));
/** Repairs and starting runs. */
export const operatorProcedure = base.meta({ role: 'operator' }).use(requireRole('operator'));
/** Operators, roles and policy. */
export const adminProcedure = base.meta({ role: 'admin' }).use(requireRole('admin'));
