import type { RunDetail } from '@sagaflow/engine';
import { z } from 'zod';
import { ServiceError } from './service-error.ts';
import type { SignupDeps } from './signup-deps.ts';

const uuid = z.uuid();

/** The run behind a signup id, or a 404: an id that is not a UUID, or a run of some other flow. */
export async function findSignup(deps: SignupDeps, id: string): Promise<RunDetail> {
  const detail = uuid.safeParse(id).success ? await deps.engine.getRun(id) : null;
  if (!detail || detail.run.flowName !== deps.signupFlow.name) throw new ServiceError('not_found', `no signup ${id}`);
  return detail;
}
