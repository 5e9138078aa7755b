import { resolveRef } from '../resolve-ref.js';
import type { KeywordCheck, KeywordContext, KeywordDefinition, SchemaEnv } from '../types.js';

export const commentKeyword: KeywordDefinition = { schemaType: [] };

export const idKeyword: KeywordDefinition = {
  schemaType: [],
  compile() {
    throw new Error('NOT SUPPORTED: keyword "id", use "$id" for schema ID');
  },
};

/**
 * `$ref`: a target without references of its own is inlined (its errors' `schemaPath` starts with
 * the `$ref` text), any other is a function of its own (`schemaPath` from its own `#`), called
 * with fresh `var`s and no `propertyName`.
 */
export const refKeyword: KeywordDefinition = {
  schemaType: ['string'],
  compile(keyword: KeywordContext): KeywordCheck {
    const ref = keyword.schema as string;
    const { env, baseId, session } = keyword.it;
    const { root } = env;
    if ((ref === '#' || ref === '#/') && baseId === root.baseId) return callFunction(keyword, root);
    const resolved = resolveRef(session, root, baseId, ref);
    if (resolved === undefined) throw new Error(`can't resolve reference ${ref} from id ${baseId}`);
    if ('env' in resolved) return callFunction(keyword, resolved.env);
    const check = keyword.subschema({ schema: resolved.inline, errSchemaPath: ref });
    return (data, at, run) => check(data, at, run);
  },
};

function callFunction(keyword: KeywordContext, target: SchemaEnv): KeywordCheck {
  if (target.$async && !keyword.it.env.$async) throw new Error('async schema referenced by sync schema');
  // Looked up at call time: the target may be the function still being compiled (recursion).
  return (data, at, run) => (target.validate as NonNullable<SchemaEnv['validate']>)(data, at.path, run);
}
