import { initTRPC, TRPCError } from '@trpc/server';
import { EngineError, type Database, type Engine } from '@sagaflow/engine';
import { apiCodeFor } from './error-codes.ts';
import { formatApiError } from './format-api-error.ts';

export interface ApiContext {
  engine: Engine;
  /** The control plane's database, for reads outside the engine's own (the outbox's figures). */
  db: Pick<Database, 'prisma'>;
}

const t = initTRPC.context<ApiContext>().create({ errorFormatter: formatApiError, isDev: false });

/** Engine errors leave the API with the code the table maps them to, and their own message. */
const mapEngineErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof EngineError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: apiCodeFor[cause.code], message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(mapEngineErrors);
