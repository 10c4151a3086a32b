// A forked child that tells its parent which file `@sagaflow/engine` resolves to in it, then exits:
// for the test that bench children run the engine's build unless told to run its sources.
process.send?.(import.meta.resolve('@sagaflow/engine'), () => process.disconnect());
