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
    readonly validate: (
      value: unknown,
    ) => StandardSchemaV1.Result<Output> | Promise<StandardSchemaV1.Result<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

export declare namespace StandardSchemaV1 {
  type Result<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly Issue[] };
  interface Issue {
    readonly message: string;
    readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
  }
  /** The type a schema accepts. */
  type InferInput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['input'];
  /** The type a schema produces: what a flow or action receives. */
  type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];
}
