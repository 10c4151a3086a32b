export type { AppRouter } from './api/app-router.ts';
export { parseEnv, type ControlEnv } from './env.ts';
export type { Series } from './api/series/read-series.ts';
export { startControlPlane, type ControlPlane } from './start-control-plane.ts';
