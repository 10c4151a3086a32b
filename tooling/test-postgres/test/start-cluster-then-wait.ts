// Child process for the crash tests: starts a cluster, prints where it is, then waits to be killed.
import { startCluster } from '../src/start-cluster.ts';

const cluster = await startCluster();
process.stdout.write(`${JSON.stringify({ port: cluster.port, dataDir: cluster.dataDir })}\n`);
setInterval(() => {}, 1 << 30);
