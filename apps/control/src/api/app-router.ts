import { runsRouter } from './runs/runs-router.ts';
import { router } from './trpc.ts';

export const appRouter = router({ runs: runsRouter });
export type AppRouter = typeof appRouter;
