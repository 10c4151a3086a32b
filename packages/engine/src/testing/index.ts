export { createTestEngine, type TestEngine } from './create-test-engine.ts';
export { FaultPlan } from './fault-plan.ts';
export { countHistoryByTag, countOrphanRows } from './count-history.ts';
export { seedHistory, type SeedHistoryOptions } from './seed-history.ts';
export { TestClock } from './test-clock.ts';
export {
  orderFulfilmentProcess,
  PoisonNoteError,
  twoHours,
  type FulfilmentService,
  type OrderFulfilmentOptions,
} from './order-fulfilment.ts';
export { seedLostRuns, seedOverdueSteps, type OverdueStepsSeed } from './seed-sweep-backlog.ts';
