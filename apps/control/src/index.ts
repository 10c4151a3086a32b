export type { AppRouter } from './api/app-router.ts';
export { parseEnv, type ControlEnv } from './env.ts';
export { startControlPlane, type ControlPlane } from './start-control-plane.ts';
