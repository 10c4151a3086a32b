import { findSignup } from './find-signup.ts';
import type { JsonReply, SignupDeps } from './signup-deps.ts';

/**
 * POST /signups/:id/verify: sends the `verified` signal the saga waits for. A real service would
 * check the token from the verification email first. A finished signup takes no signal (409).
 */
export async function verifySignup(deps: SignupDeps, id: string): Promise<JsonReply> {
  const { run } = await findSignup(deps, id);
  const { signalId } = await deps.engine.signal(run.id, 'verified');
  return { status: 202, body: { runId: run.id, signalId } };
}
