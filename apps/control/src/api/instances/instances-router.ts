import { router } from '../trpc.ts';
import { getInstance } from './get-instance.ts';
import { listInstances } from './list-instances.ts';
import { pageInstanceTransitionsProcedure } from './page-instance-transitions.ts';
import { pageInstancesProcedure } from './page-instances.ts';

/** Process-manager instances, read-only: release and repair are audited commands, not here. */
export const instancesRouter = router({
  list: listInstances,
  page: pageInstancesProcedure,
  get: getInstance,
  transitions: pageInstanceTransitionsProcedure,
});
