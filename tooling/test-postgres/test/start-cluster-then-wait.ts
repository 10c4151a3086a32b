// Child process for the crash tests: starts a cluster, prints where it is, then waits to be killed.
import { startCluster } from '../src/start-cluster.ts';

const cluster = await startCluster();
process.stdout.write(`${JSON.stringify({ port: cluster.port, dataDir: cluster.dataDir })}\n`);
// Waits until killed, or exits (stopping the cluster on 'exit') if the test process goes away first.
process.stdin.resume();
process.stdin.once('end', () => process.exit(0));
