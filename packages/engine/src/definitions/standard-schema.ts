/**
 * The Standard Schema interface (standardschema.dev, v1), typed here rather than taken as a
 * dependency: it is a handful of types every validator that implements it (zod 4, valibot, arktype)
 * satisfies structurally, so a host brings whichever validator it already uses and the engine
 * depends on none of them. `jsonSchema` is the optional Standard JSON Schema converter (zod 4 has
 * it): when present, the control plane renders a form from it.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

/** What a validator answers: the value it produced, or the issues it found. */
export type StandardSchemaResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly StandardSchemaIssue[] };

export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}
