import type { JsonReply, SignupDeps } from './signup-deps.ts';
import { parseSignupRequest } from './signup-request.ts';

/**
 * POST /signups: validates the body, then starts the saga and answers 202 at once; the work runs on
 * the engine's workers. The email is the run's business key, so a second signup for it is a 409.
 */
export async function startSignup(deps: SignupDeps, body: unknown): Promise<JsonReply> {
  const { email, name } = parseSignupRequest(body);
  const { runId } = await deps.engine.startFlow(
    deps.signupFlow,
    { email, name, verifyWithinSeconds: deps.verifyWithinSeconds },
    { businessKey: email, tags: ['signup'] },
  );
  return { status: 202, body: { runId, status: 'Pending' }, headers: { location: `/signups/${runId}` } };
}
