import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that took longest in CI (the vitest JSON of `npm test`, 2026-12-05, seconds in either
 * project), slowest first. A list that has gone stale only orders less well: a file not here keeps
 * vitest's own order, and nothing here is skipped or run twice.
 */
const slowFiles = [
  'packages/engine/test/chaos/chaos.pg.test.ts', // 79 s
  'bench/src/run-peer-phase.pg.test.ts', // 58 s
  'packages/engine/test/regressions/review11/first-run-of-a-fresh-engine.pg.test.ts', // 48 s
  'apps/control/test/embedded-data-dir-lock.test.ts', // 46 s
  'apps/control/test/cli-over-http.test.ts', // 36 s
  'apps/control/test/control-startup.test.ts', // 28 s
  'bench/src/scale/console-query-plans.pg.test.ts', // 26 s
  'apps/control/test/cli.test.ts', // 23 s
  'apps/control/test/api-fuzz.test.ts', // 23 s
  'packages/engine/test/package/installed-tarball.pg.test.ts', // 22 s
  'packages/engine/test/regressions/review13/starts-under-the-second-statement-rule.test.ts', // 21 s
  'apps/control/test/metrics-endpoint.test.ts', // 21 s
  'packages/engine/test/regressions/wave2/operator-command-waits-for-a-busy-pool.pg.test.ts', // 18 s
  'packages/engine/test/regressions/wave2/one-process-owns-an-embedded-data-dir.pglite.test.ts', // 18 s
  'packages/engine/test/regressions/wave2/dead-owner-reclaim.test.ts', // 16 s
  'bench/src/run-peer-phase.durable.pg.test.ts', // 15 s
  'apps/control/test/prune-cli-killed-midway.test.ts', // 14 s
  'packages/engine/test/repairs/step-repair-races.pg.test.ts', // 14 s
  'bench/src/run-pglite-phase.test.ts', // 13 s
  'tooling/lint-rules/src/boundaries.test.ts', // 13 s
  'tooling/test-postgres/src/start-cluster.test.ts', // 12 s
  'apps/control/src/logging/create-logger.test.ts', // 11 s
  'packages/engine/test/repairs/reclaim-races.pg.test.ts', // 11 s
  'packages/engine/test/regressions/wave2/nothing-recorded-after-a-run-ends.pg.test.ts', // 11 s
  'packages/engine/test/regressions/review14/sigkill-with-rounds-out.pg.test.ts', // 10 s
  'apps/control/test/read-overview.test.ts', // 10 s
];
const rank = new Map(slowFiles.map((file, i) => [file, i]));

/**
 * Vitest's order (ADR 0081: the projects one after another, each in its workers), but within each project
 * the files known to be slow go first, slowest first (ADR 0096). On a fresh clone vitest has no timings of
 * its own and orders by file size, so a slow small file could start last and run on alone while the other
 * worker had nothing left: the run ended with `bench/src/run-pglite-phase.test.ts`, 13 s by itself.
 */
export class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rankOf = (spec: TestSpecification) => rank.get(relative(root, spec.moduleId)) ?? slowFiles.length;
    // Array.prototype.sort is stable: within a project, files of equal rank keep vitest's order.
    const projectOrder = new Map<string, number>();
    for (const spec of sorted)
      if (!projectOrder.has(spec.project.name)) projectOrder.set(spec.project.name, projectOrder.size);
    return sorted.sort(
      (a, b) =>
        (projectOrder.get(a.project.name) ?? 0) - (projectOrder.get(b.project.name) ?? 0) || rankOf(a) - rankOf(b),
    );
  }
}
