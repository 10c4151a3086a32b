import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { root } from './ensure-pnpm.mjs';
import { filesOutsideTheirProgram, ownPrograms, workspacePackages } from './typed-programs.mjs';

describe('the programs npm test type-checks (ADR 0092)', () => {
  it('hold every file of every Node package: none is left unchecked', () => {
    expect(filesOutsideTheirProgram(root)).toEqual([]);
  });

  it('cover every workspace package with a tsconfig, the DOM ones on their own', () => {
    const packages = workspacePackages(root);
    for (const p of ['packages/engine', 'apps/control', 'bench', 'tooling/test-postgres', ...ownPrograms])
      expect(packages).toContain(p);
  });

  let scratch;
  afterEach(() => scratch && rmSync(scratch, { recursive: true, force: true }));

  it('names a file a package compiles that the Node program leaves out', () => {
    scratch = mkdtempSync(join(tmpdir(), 'sagaflow-programs-'));
    writeFileSync(join(scratch, 'package.json'), '{}');
    writeFileSync(join(scratch, 'pnpm-workspace.yaml'), 'packages:\n  - libs/*\n');
    for (const lib of ['a', 'b']) {
      mkdirSync(join(scratch, 'libs', lib, 'src'), { recursive: true });
      writeFileSync(join(scratch, 'libs', lib, 'package.json'), '{}');
      writeFileSync(join(scratch, 'libs', lib, 'tsconfig.json'), '{ "include": ["src"] }');
      writeFileSync(join(scratch, 'libs', lib, 'src', 'index.ts'), 'export const x = 1;\n');
    }
    writeFileSync(join(scratch, 'tsconfig.node-packages.json'), '{ "include": ["libs/a/src"] }');
    expect(filesOutsideTheirProgram(scratch)).toEqual([join('libs', 'b', 'src', 'index.ts')]);
  });
});
