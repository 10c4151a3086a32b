import { runPglitePhase, type PglitePhaseSpec } from './run-pglite-phase.ts';

/**
 * One PGlite phase in a process of its own, forked by run-pglite-phase.ts with a
 * {@link PglitePhaseSpec} as its JSON argument: runs the phase, sends its result and exits. Nothing
 * else ran here, so the CPU per flow it measures (engine and embedded database together, both in
 * this process) is theirs alone, not what another system left in the bench's process (ADR 0049, 0055).
 */
const spec = JSON.parse(process.argv[2] ?? 'null') as PglitePhaseSpec | null;
const send = process.send?.bind(process);
if (spec === null || !send) {
  process.stderr.write('pglite-phase-child: usage: forked with a JSON phase spec\n');
  process.exit(2);
}
try {
  const result = await runPglitePhase(spec);
  send(result, () => process.disconnect());
} catch (error) {
  // Said and ended here: an open IPC channel must not keep a failed phase's process waiting.
  process.stderr.write(
    `pglite-phase-child: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
}
