export { findNatsServer, natsServerCandidates } from './find-nats-server.ts';
export type { NatsServer, StartNatsServerOptions } from './nats-server.ts';
export { startNatsServer } from './start-nats-server.ts';
export { TestNatsError } from './test-nats-error.ts';
export type { TestNatsErrorCode } from './test-nats-error.ts';
