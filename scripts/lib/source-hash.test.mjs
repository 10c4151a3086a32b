import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sourceHash } from './source-hash.mjs';

const made = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A checkout-like tree: a console app with a page, and a lockfile beside it. */
function checkout() {
  const base = mkdtempSync(join(tmpdir(), 'sagaflow-source-hash-'));
  made.push(base);
  mkdirSync(join(base, 'web', 'app'), { recursive: true });
  writeFileSync(join(base, 'web', 'app', 'page.tsx'), 'export default function Page() { return null; }\n');
  writeFileSync(join(base, 'lock.yaml'), 'lockfileVersion: 9\n');
  return { base, hash: () => sourceHash(base, [join(base, 'web')], [join(base, 'lock.yaml')]) };
}

describe('the console source hash: `npm start` rebuilds only when a source changed', () => {
  it('is the same after a build wrote its outputs and generated files into the tree', () => {
    const { base, hash } = checkout();
    const before = hash();
    // What `next build` and a typecheck leave behind.
    writeFileSync(join(base, 'web', 'next-env.d.ts'), '/// <reference types="next" />\n');
    writeFileSync(join(base, 'web', 'tsconfig.tsbuildinfo'), '{}');
    mkdirSync(join(base, 'web', '.next'));
    writeFileSync(join(base, 'web', '.next', 'BUILD_ID'), 'abc');
    mkdirSync(join(base, 'web', 'node_modules'));
    writeFileSync(join(base, 'web', 'node_modules', 'x.js'), '1');
    expect(hash()).toBe(before);
  });

  it('changes with a source file, a new file, or the lockfile', () => {
    const { base, hash } = checkout();
    const seen = new Set([hash()]);
    writeFileSync(join(base, 'web', 'app', 'page.tsx'), 'export default function Page() { return 1; }\n');
    seen.add(hash());
    writeFileSync(join(base, 'web', 'app', 'layout.tsx'), '');
    seen.add(hash());
    writeFileSync(join(base, 'lock.yaml'), 'lockfileVersion: 10\n');
    seen.add(hash());
    expect(seen.size).toBe(4);
  });

  it('does not depend on where the checkout is', () => {
    const a = checkout();
    const b = checkout();
    expect(a.hash()).toBe(b.hash());
  });
});
