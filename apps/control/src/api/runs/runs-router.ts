import { router } from '../trpc.ts';
import { getRun } from './get-run.ts';
import { listRuns } from './list-runs.ts';
import { startRun } from './start-run.ts';

export const runsRouter = router({ list: listRuns, get: getRun, start: startRun });
