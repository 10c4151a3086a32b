// `npm run typecheck` (and `npm test`'s first step): every package's TypeScript, type-checked once
// (ADR 0092). The Node packages are one program; the console and the e2e specs, whose types include
// the DOM's, run their own `typecheck` scripts. Every program is checked even when one fails.
import { join } from 'node:path';
import { ensurePnpm, root } from './lib/ensure-pnpm.mjs';
import { run } from './lib/run.mjs';
import { nodeProgram, ownPrograms } from './lib/typed-programs.mjs';

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const pnpm = ensurePnpm();
const codes = [await run(process.execPath, [tsc, '-p', nodeProgram], { cwd: root })];
for (const folder of ownPrograms) codes.push(await run(pnpm, ['run', 'typecheck'], { cwd: join(root, folder) }));
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
