// `node run-built.mjs <entry.ts> [args…]`: how every bench script starts (package.json). It builds the
// engine first when its build is missing or older than its sources, then runs the entry with the
// bench's flags and without the source condition, so what the bench measures is the engine as a host
// runs it: tsc's JavaScript from dist/, not its TypeScript compiled on load (ADR 0064).
import { spawn } from 'node:child_process';
import { buildEngine } from '../scripts/lib/engine-build.mjs';
import { withoutSourceCondition } from '../scripts/lib/source-condition.mjs';
import { benchExecArgv } from './src/bench-exec-argv.mjs';

const [entry, ...args] = process.argv.slice(2);
if (entry === undefined) {
  console.error('usage: node run-built.mjs <entry.ts> [args…]');
  process.exit(2);
}
const built = await buildEngine();
if (built !== 0) process.exit(built);
const child = spawn(process.execPath, [...benchExecArgv, entry, ...args], {
  stdio: 'inherit',
  env: { ...process.env, NODE_OPTIONS: withoutSourceCondition(process.env.NODE_OPTIONS) },
});
// Ctrl-C reaches the entry too (one process group): wait while it stops its throwaway cluster.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 0 : 1)));
