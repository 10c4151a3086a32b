import type { Json } from '@sagaflow/engine';
import { findSignup } from './find-signup.ts';
import type { JsonReply, SignupDeps } from './signup-deps.ts';

/** GET /signups/:id: where the saga is, from `engine.getRun`. */
export async function getSignup(deps: SignupDeps, id: string): Promise<JsonReply> {
  const { run, actions, compensations } = await findSignup(deps, id);
  return {
    status: 200,
    body: {
      runId: run.id,
      status: run.status,
      waitingFor: run.waitingFor,
      result: run.output,
      error: publicError(run.error),
      steps: actions.map((a) => ({ name: a.name, kind: a.kind, status: a.status, attempts: a.attempts })),
      compensations: compensations.map((c) => ({ name: c.name, status: c.status })),
    },
  };
}

/** The recorded error without its stack trace, which is for operators, not API clients. */
function publicError(error: Json): Json {
  if (error === null || typeof error !== 'object' || Array.isArray(error)) return error;
  const { name = null, code = null, message = null } = error;
  return { name, code, message };
}
