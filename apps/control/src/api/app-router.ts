import { instancesRouter } from './instances/instances-router.ts';
import { runsRouter } from './runs/runs-router.ts';
import { router } from './trpc.ts';

export const appRouter = router({ runs: runsRouter, instances: instancesRouter });
export type AppRouter = typeof appRouter;
