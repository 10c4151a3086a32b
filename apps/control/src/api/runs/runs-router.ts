import { router } from '../trpc.ts';
import { getRun } from './get-run.ts';
import { listActionSchemas } from './list-action-schemas.ts';
import { listRuns } from './list-runs.ts';
import { listStartableFlows } from './list-startable-flows.ts';
import { pageRunsProcedure } from './page-runs.ts';
import { startRun } from './start-run.ts';

export const runsRouter = router({
  list: listRuns,
  page: pageRunsProcedure,
  get: getRun,
  start: startRun,
  flows: listStartableFlows,
  actions: listActionSchemas,
});
