// What the postgres project's global setups provide to every test file: the throwaway cluster's admin
// URL and the migrated template (packages/engine/test/support/global-setup-postgres.ts), and the control
// plane and the engine compiled for the processes the tests spawn (support/global-setup-test-build.ts).
declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    testBuild: string;
  }
}
export {};
