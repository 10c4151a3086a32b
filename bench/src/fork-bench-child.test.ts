import { once } from 'node:events';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildEngine } from '../../scripts/lib/engine-build.mjs';
import { withoutSourceCondition, withSourceCondition } from '../../scripts/lib/source-condition.mjs';
import { exitOf, forkBenchChild } from './fork-bench-child.ts';

const probe = new URL('./engine-entry-probe.ts', import.meta.url);

/** Where `@sagaflow/engine` resolves in a bench child forked with `nodeOptions` as this process's NODE_OPTIONS. */
async function engineEntryInChild(nodeOptions: string): Promise<string> {
  process.env.NODE_OPTIONS = nodeOptions;
  const child = forkBenchChild(probe, []);
  const [entry] = (await once(child, 'message')) as [string];
  await exitOf(child);
  return entry;
}

describe('a bench child (ADR 0064)', () => {
  const saved = process.env.NODE_OPTIONS;
  // The child resolves the build's entry, which must exist: built here when no build is current (a
  // fresh clone, this file alone), not left to whichever earlier test happened to build it.
  beforeAll(async () => {
    expect(await buildEngine()).toBe(0);
  }, 300_000);
  afterEach(() => {
    process.env.NODE_OPTIONS = saved;
  });

  it("runs the engine's build, as a host that installed it does, when nothing asks for its sources", async () => {
    const entry = await engineEntryInChild(withoutSourceCondition(saved));
    expect(entry).toMatch(/\/packages\/engine\/dist\/index\.js$/);
  });

  it("runs the engine's sources when its parent runs with the source condition (the test suite)", async () => {
    const entry = await engineEntryInChild(withSourceCondition(saved));
    expect(entry).toMatch(/\/packages\/engine\/src\/index\.ts$/);
  });
});
