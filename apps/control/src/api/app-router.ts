import { anomaliesRouter } from './anomalies/anomalies-router.ts';
import { auditRouter } from './audit/audit-router.ts';
import { approvalPolicyRouter } from './approvals/approval-policy-router.ts';
import { approvalsRouter } from './approvals/approvals-router.ts';
import { authRouter } from './auth/auth-router.ts';
import { definitionsRouter } from './definitions/definitions-router.ts';
import { instancesRouter } from './instances/instances-router.ts';
import { operatorsRouter } from './operators/operators-router.ts';
import { outboxRouter } from './outbox/outbox-router.ts';
import { overviewRouter } from './overview/overview-router.ts';
import { repairsRouter } from './repairs/repairs-router.ts';
import { runsRouter } from './runs/runs-router.ts';
import { seriesRouter } from './series/series-router.ts';
import { tokensRouter } from './tokens/tokens-router.ts';
import { router } from './trpc.ts';

export const appRouter = router({
  auth: authRouter,
  runs: runsRouter,
  instances: instancesRouter,
  outbox: outboxRouter,
  overview: overviewRouter,
  operators: operatorsRouter,
  repairs: repairsRouter,
  series: seriesRouter,
  anomalies: anomaliesRouter,
  audit: auditRouter,
  definitions: definitionsRouter,
  tokens: tokensRouter,
  approvals: approvalsRouter,
  approvalPolicy: approvalPolicyRouter,
});
export type AppRouter = typeof appRouter;
