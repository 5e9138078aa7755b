import equalModule from 'ajv/dist/runtime/equal.js';
import ucs2lengthModule from 'ajv/dist/runtime/ucs2length.js';
import uriModule from 'ajv/dist/runtime/uri.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';

// ajv's own runtime helpers, the ones its standalone (pre-compiled) code imports: the interpreter
// compares, measures and resolves with the very functions ajv's generated code calls, so it cannot
// drift from them. They are CommonJS with a `default` property: Node's ESM hands over the module
// object, a bundler may hand over the default itself.
function commonJsDefault<T>(module: unknown): T {
  const withDefault = module as { default?: T };
  return withDefault.default ?? (module as T);
}

/** fast-deep-equal, as ajv's `const`, `enum` and `uniqueItems` use it. */
export const deepEqual = commonJsDefault<(a: unknown, b: unknown) => boolean>(equalModule);

/** The length `minLength`/`maxLength` count: code points, a surrogate pair counting once. */
export const ucs2length = commonJsDefault<(text: string) => number>(ucs2lengthModule);

/** What ajv needs of a URI library (fast-uri's functions). */
export type UriResolver = {
  parse(uri: string): { fragment?: string };
  serialize(components: { fragment?: string }): string;
  resolve(base: string, relative: string): string;
};

/** fast-uri, ajv's URI resolver for `$id` and `$ref`. */
export const uriResolver = commonJsDefault<UriResolver>(uriModule);

/** ajv-formats' full-mode definitions: regular expressions and functions, nothing compiled from strings. */
export const formats: Readonly<Record<string, unknown>> = fullFormats;
