import { router } from '../trpc.ts';
import { pageAnomaliesProcedure } from './page-anomalies.ts';

/** The anomaly journal (races and engine faults, seed 000's codes), for the console's anomaly log. */
export const anomaliesRouter = router({ page: pageAnomaliesProcedure });
