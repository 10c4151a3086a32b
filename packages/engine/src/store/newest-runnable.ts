import { Prisma } from '../generated/prisma/client.ts';

/**
 * The run (alias `run`) is of a version this worker's code can run (ADR 0112): no newer than the
 * version it registered for the run's flow, `versions[i]` for the flow `flows[i]`. An integer
 * comparison on the row the statement already holds; without `versions` (null), every version passes
 * (a caller that names flows only, as before). The flow's name is tested apart (`= any(flows)`).
 */
export function newestRunnable(
  args: { flows: readonly string[]; versions?: readonly number[] | undefined },
  run: string,
): Prisma.Sql {
  const r = Prisma.raw(run);
  // One text whether `versions` is given or not (null): the pool's statements are prepared by their text.
  const versions = args.versions ? [...args.versions] : null;
  return Prisma.sql`${r}.flow_version <= coalesce((${versions}::int[])[array_position(${[...args.flows]}::text[], ${r}.flow_name)], ${r}.flow_version)`;
}
