// What the postgres project's global setups provide to every test file: the throwaway cluster's admin
// URL and the migrated template (packages/engine/test/support/global-setup-postgres.ts), and the control
// plane compiled for the CLI tests (support/global-setup-cli-build.ts).
declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    controlCliBuild: string;
  }
}
export {};
