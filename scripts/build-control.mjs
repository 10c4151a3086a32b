// `pnpm --filter @sagaflow/control run build` (and the scale bench before it starts a control
// plane): the engine and the control plane compiled to JavaScript, skipped when the sources have
// not changed since the last build; `--force` rebuilds anyway.
import { buildControl } from './lib/control-build.mjs';

process.exit(await buildControl({ force: process.argv.includes('--force') }));
