import { analyzeLikeAutovacuum } from './analyze-like-autovacuum.ts';
import { dbosPeer } from './dbos-peer.ts';
import { floorPeer } from './floor-peer.ts';
import type { PeerLoopsSpec, PeerLoopsMessage } from './run-peer-loops.ts';
import { runClosedLoop } from './run-closed-loop.ts';
import { sagaflowPeer } from './sagaflow-peer.ts';

/**
 * One system's phase in a process of its own, forked by run-peer-loops.ts with a {@link PeerLoopsSpec}
 * as its JSON argument: opens the system on the phase's database, runs the warm-up (two, with an
 * ANALYZE between them), says `warm`,
 * runs the measured loop when the parent says `go`, sends the loop with this process's CPU time over
 * it and the pool's counters, and closes and exits when the parent says so (the parent reads the
 * server's CPU at both edges of the loop, with nothing else of the phase running).
 * Nothing else runs here, so the Node CPU measured is the system's and a client's, not what another
 * system left in the process (DBOS leaves its AsyncLocalStorage hooks on every promise after it shut
 * down: ADR 0049).
 */
const spec = JSON.parse(process.argv[2] ?? 'null') as PeerLoopsSpec | null;
const send = process.send?.bind(process);
if (spec === null || !send) {
  process.stderr.write('peer-phase-child: usage: forked with a JSON phase spec\n');
  process.exit(2);
}
const tell = (message: PeerLoopsMessage) => send(message);
/** The parent's next word (`go`, then `close`); its going away counts as one. */
const fromParent = () =>
  new Promise<void>((resolve) => {
    process.once('message', () => resolve());
    process.once('disconnect', () => resolve());
  });

const system =
  spec.system === 'DBOS' ? dbosPeer : spec.system === 'Floor' ? floorPeer : sagaflowPeer({ notify: spec.notify });
const peer = await system.open(spec.url, spec.concurrency);
try {
  // Warmed up, analyzed as autovacuum would have by now, and warmed up again on the new plans (ADR 0051).
  // The first warm-up leaves at least `warmupFlows` runs, so the plans the ANALYZE brings are those
  // of tables the same size on a slow machine as on a fast one (ADR 0086).
  const first = await runClosedLoop(spec.concurrency, spec.warmupMs, (n) => peer.runOne(n), {
    atLeastFlows: spec.warmupFlows,
  });
  await analyzeLikeAutovacuum(spec.url);
  const second = await runClosedLoop(spec.concurrency, spec.warmupMs, (n) => peer.runOne(n));
  const warmup = { ...second, flows: first.flows + second.flows };
  tell({ kind: 'warm', warmup });
  await fromParent();
  const before = process.cpuUsage();
  const loop = await runClosedLoop(spec.concurrency, spec.measureMs, (n) => peer.runOne(n));
  const after = process.cpuUsage();
  const nodeMs = (after.user + after.system - before.user - before.system) / 1000;
  tell({ kind: 'measured', loop, nodeMs, poolCounters: peer.poolCounters?.() ?? null });
  await fromParent();
} finally {
  await peer.close();
}
process.disconnect();
