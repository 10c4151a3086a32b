// Review 49 (2): a child worker that runs the long loop and hangs inside step `argv[3]` (1-based).
import { startChildPool } from '../../../support/child-worker-main.ts';
import { fastConfig, hang, longLoop, loopStep } from './long-loop.ts';

hang.at = Number(process.argv[3]) - 1;
await startChildPool({ flows: [longLoop], actions: [loopStep], config: fastConfig });
