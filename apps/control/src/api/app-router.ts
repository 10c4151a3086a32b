import { instancesRouter } from './instances/instances-router.ts';
import { outboxRouter } from './outbox/outbox-router.ts';
import { runsRouter } from './runs/runs-router.ts';
import { router } from './trpc.ts';

export const appRouter = router({ runs: runsRouter, instances: instancesRouter, outbox: outboxRouter });
export type AppRouter = typeof appRouter;
