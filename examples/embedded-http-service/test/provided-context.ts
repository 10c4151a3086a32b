// What the postgres project's global setup (packages/engine/test/support/global-setup-postgres.ts)
// provides to every test file: the throwaway cluster's admin URL and the migrated template.
declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}
export {};
