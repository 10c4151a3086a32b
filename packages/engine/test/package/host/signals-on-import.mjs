// Imports both entry points and says which process-wide listeners that added.
const events = [
  'SIGTERM',
  'SIGINT',
  'SIGHUP',
  'SIGQUIT',
  'SIGUSR2',
  'exit',
  'beforeExit',
  'uncaughtException',
  'unhandledRejection',
];
const count = () => Object.fromEntries(events.map((e) => [e, process.listenerCount(e)]));
const before = count();
await import('@sagaflow/engine');
await import('@sagaflow/engine/testing');
const after = count();
const added = Object.fromEntries(events.filter((e) => after[e] !== before[e]).map((e) => [e, after[e] - before[e]]));
console.log(JSON.stringify({ added }));
