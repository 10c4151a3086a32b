export { createAccountDirectory, type Account, type AccountDirectory, type SentEmail } from './account-directory.ts';
export { parseEnv, type ServiceEnv } from './env.ts';
export { defineSignupSaga, type SignupInput, type SignupOutput } from './signup-saga.ts';
export { startService, type Service, type ServiceOptions } from './start-service.ts';
