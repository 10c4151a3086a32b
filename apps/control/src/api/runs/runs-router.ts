import { router } from '../trpc.ts';
import { getRun } from './get-run.ts';
import { listActionSchemas } from './list-action-schemas.ts';
import { listRuns } from './list-runs.ts';
import { listStartableFlows } from './list-startable-flows.ts';
import { pageRunCompensationsProcedure } from './page-run-compensations.ts';
import { pageRunEventsProcedure } from './page-run-events.ts';
import { pageRunStepsProcedure } from './page-run-steps.ts';
import { pageRunsProcedure } from './page-runs.ts';
import { readRunChangesProcedure } from './read-run-changes.ts';
import { startRun } from './start-run.ts';

export const runsRouter = router({
  list: listRuns,
  page: pageRunsProcedure,
  get: getRun,
  steps: pageRunStepsProcedure,
  compensations: pageRunCompensationsProcedure,
  events: pageRunEventsProcedure,
  changes: readRunChangesProcedure,
  start: startRun,
  flows: listStartableFlows,
  actions: listActionSchemas,
});
