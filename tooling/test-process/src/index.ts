export { freePort } from './free-port.ts';
export { lookUpAccount } from './look-up-account.ts';
export { stopOnExit } from './stop-on-exit.ts';
