import { router } from '../trpc.ts';
import { pageAuditProcedure } from './page-audit.ts';

/** The audit trail: who repaired what, who signed in, who changed an operator. */
export const auditRouter = router({ page: pageAuditProcedure });
