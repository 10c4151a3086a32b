// Runs the pinned pnpm, installing it into .tools/ first when it is missing.
// Plain Node so that `npm start` / `npm test` work on a machine with only Node and npm.
import { ensurePnpm } from './lib/ensure-pnpm.mjs';
import { spawnSync } from 'node:child_process';

const pnpm = ensurePnpm();
const r = spawnSync(pnpm, process.argv.slice(2), { stdio: 'inherit' });
process.exit(r.status ?? 1);
