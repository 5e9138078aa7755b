import { schemaHasRules } from './always-valid.js';
import { getSchemaTypes, hasDataType, hasDataTypes, type JSONType, typeValue } from './data-type.js';
import { keywordDefinitions } from './keywords/index.js';
import { reportError } from './report.js';
import { hasRulesButRef } from './resolve-ref.js';
import { ruleGroups } from './rules-list.js';
import { escapeFragment, getFullPath, resolveUrl } from './schema-id.js';
import type {
  Check,
  KeywordCheck,
  KeywordContext,
  ObjectSchemaContext,
  SchemaContext,
  SchemaEnv,
  SchemaObject,
  Session,
  SubschemaArguments,
} from './types.js';

// The walk of ajv's code generator (compile/validate/index.ts), producing closures instead of
// source text: the same subschemas compiled in the same order (so the same compile error is met
// first), the same checks run in the same order at validation time.

/** ajv's compileSchema: the environment's function, or the one already being compiled for it. */
export function compileFunction(session: Session, env: SchemaEnv): SchemaEnv {
  for (const compiling of session.compilations) {
    if (compiling.schema === env.schema && compiling.root === env.root && compiling.baseId === env.baseId) return compiling;
  }
  const rootId = getFullPath(env.root.baseId);
  const frame = { slots: 0 };
  // Every function runs with allErrors (ajv's option), even one called from inside `not`.
  const it: SchemaContext = { schema: env.schema, env, baseId: env.baseId || rootId, errSchemaPath: '#', allErrors: true, session, frame };
  session.compilations.add(env);
  try {
    const check = functionCode(it);
    env.validate = (data, path, run) => check(data, { path, propertyName: undefined, slots: new Array<unknown>(frame.slots) }, run);
    return env;
  } finally {
    session.compilations.delete(env);
  }
}

function isObjectContext(it: SchemaContext): it is ObjectSchemaContext {
  return typeof it.schema !== 'boolean';
}

const alwaysValid: Check = () => true;

/** ajv's validateFunctionCode: the top of a compiled function. */
function functionCode(it: SchemaContext): Check {
  if (isObjectContext(it) && schemaHasRules(it.schema)) return typeAndKeywords(it);
  if (it.schema === false) return falseSchema(it);
  return alwaysValid;
}

/** ajv's subschemaCode: a subschema inlined into the current function. */
function subschemaCode(it: SchemaContext): Check {
  if (isObjectContext(it) && schemaHasRules(it.schema)) {
    const schemaId = it.schema.$id;
    if (schemaId) it.baseId = resolveUrl(it.baseId, schemaId);
    if (it.schema.$async && !it.env.$async) throw new Error('async schema in sync schema');
    return typeAndKeywords(it);
  }
  if (it.schema === false) return falseSchema(it);
  return alwaysValid;
}

function falseSchema(it: SchemaContext): Check {
  return (_data, at, run) => {
    reportError(it, at, run, 'false schema', {}, 'boolean schema is false');
    return false;
  };
}

type CompiledGroup = { type: JSONType | undefined; checks: KeywordCheck[]; typeErrorHere: boolean };

function usesKeyword(schema: SchemaObject, keyword: string): boolean {
  return schema[keyword] !== undefined;
}

function usesGroup(schema: SchemaObject, keywords: readonly string[]): boolean {
  return keywords.some((keyword) => usesKeyword(schema, keyword));
}

/**
 * ajv's typeAndKeywords and schemaKeywords. A wrong `type` is reported up front, unless the schema
 * has a single type with keywords of that type's group: then it is reported where that group
 * runs, after the untyped group's errors.
 */
function typeAndKeywords(it: ObjectSchemaContext): Check {
  const { schema } = it;
  const types = getSchemaTypes(schema);
  const onlyGroup = types.length === 1 ? ruleGroups.find((group) => group.type === types[0]) : undefined;
  const checkUpFront = types.length > 0 && !(onlyGroup && usesGroup(schema, onlyGroup.keywords));
  const typeError = (at: Parameters<Check>[1], run: Parameters<Check>[2]): void => {
    const type = typeValue(schema, types);
    reportError(it, at, run, 'type', { type }, `must be ${String(type)}`);
  };

  // A lone `$ref` compiles alone. Beside other rules it is one keyword among them (ajv evaluates a
  // `$ref`'s siblings, which draft-07 says to ignore).
  if (schema.$ref && !hasRulesButRef(schema)) {
    const check = compileKeyword(it, '$ref', undefined);
    return (data, at, run) => {
      const start = run.errors.length;
      if (checkUpFront && !hasDataTypes(types, data)) typeError(at, run);
      check?.(data, at, run);
      return run.errors.length === start;
    };
  }

  const groups: CompiledGroup[] = [];
  for (const group of ruleGroups) {
    if (!usesGroup(schema, group.keywords)) continue;
    const checks: KeywordCheck[] = [];
    for (const keyword of group.keywords) {
      if (!usesKeyword(schema, keyword)) continue;
      const check = compileKeyword(it, keyword, group.type);
      if (check) checks.push(check);
    }
    groups.push({ type: group.type, checks, typeErrorHere: !checkUpFront && types.length === 1 && types[0] === group.type });
  }
  const { allErrors } = it;

  return (data, at, run) => {
    const start = run.errors.length;
    if (checkUpFront && !hasDataTypes(types, data)) typeError(at, run);
    for (const group of groups) {
      if (group.type === undefined || hasDataType(group.type, data)) {
        for (const check of group.checks) {
          // Without allErrors, ajv nests the rest of a group inside each keyword's success branch.
          if (!check(data, at, run) && !allErrors) break;
        }
      } else if (group.typeErrorHere) {
        typeError(at, run);
      }
      // … and the following groups inside "no error so far".
      if (!allErrors && run.errors.length !== start) break;
    }
    return run.errors.length === start;
  };
}

/** ajv's keywordCode with the KeywordCxt constructor's checks of the keyword's value. */
function compileKeyword(it: ObjectSchemaContext, keyword: string, ruleType: JSONType | undefined): KeywordCheck | undefined {
  const definition = keywordDefinitions[keyword];
  if (!definition) return undefined;
  const { schema } = it;
  const dependencies = definition.dependencies;
  if (dependencies?.some((dependency) => !Object.hasOwn(schema, dependency))) {
    throw new Error(`parent schema must have dependencies of ${keyword}: ${dependencies.join(',')}`);
  }
  const value = schema[keyword];
  if (!validSchemaType(value, definition.schemaType, definition.allowUndefined)) {
    throw new Error(`${keyword} value must be ${JSON.stringify(definition.schemaType)}`);
  }
  const context: KeywordContext = {
    it,
    keyword,
    schema: value,
    parentSchema: schema,
    ruleType,
    subschema: (args) => subschemaOf(it, args),
  };
  return definition.compile?.(context);
}

function validSchemaType(value: unknown, schemaType: readonly string[], allowUndefined = false): boolean {
  return (
    schemaType.length === 0 ||
    schemaType.some((type) =>
      type === 'array'
        ? Array.isArray(value)
        : type === 'object'
          ? Boolean(value) && typeof value === 'object' && !Array.isArray(value)
          : typeof value === type || (allowUndefined && value === undefined),
    )
  );
}

/** ajv's KeywordCxt.subschema: the same function, a deeper schema path, the parent's base URI. */
function subschemaOf(it: ObjectSchemaContext, args: SubschemaArguments): Check {
  if ('keyword' in args) {
    const value = it.schema[args.keyword];
    const property = args.schemaProperty;
    return subschemaCode({
      ...it,
      schema: property === undefined ? value : (value as Record<string | number, unknown>)[property],
      errSchemaPath:
        property === undefined ? `${it.errSchemaPath}/${args.keyword}` : `${it.errSchemaPath}/${args.keyword}/${escapeFragment(property)}`,
      allErrors: args.allErrors ?? it.allErrors,
    });
  }
  return subschemaCode({ ...it, schema: args.schema, errSchemaPath: args.errSchemaPath });
}
