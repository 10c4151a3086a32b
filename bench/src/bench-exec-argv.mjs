/**
 * Node's flags for the bench's processes (its entry points and the children they fork): tsx, for the
 * bench's own TypeScript, and nothing that picks the engine's sources. Without the `@sagaflow/source`
 * condition `@sagaflow/engine` resolves to its build (dist/), the JavaScript a host that installed
 * the package runs (ADR 0064); tsx compiles only TypeScript files, so the engine's code is tsc's
 * output as shipped. A process started with the condition in NODE_OPTIONS (the test suite's) passes
 * it on to the children it forks, which then run the sources as it does.
 */
export const benchExecArgv = ['--import', 'tsx'];
