import { alwaysValidSchema } from '../always-valid.js';
import { member, memberAt, reportError } from '../report.js';
import type { Check, KeywordCheck, KeywordContext, KeywordDefinition, SchemaObject } from '../types.js';
import { schemaPattern } from './string.js';

// ajv reads properties as `data[name] !== undefined` (ownProperties off): an inherited name such as
// `constructor` counts as present, and its value is what gets checked. Kept so.

/** ajv's allSchemaProperties: the names of a keyword's map, without `__proto__`. */
function schemaProperties(map: unknown): string[] {
  return map ? Object.keys(map).filter((name) => name !== '__proto__') : [];
}

export const limitPropertiesKeyword: KeywordDefinition = {
  schemaType: ['number'],
  compile({ it, keyword, schema }: KeywordContext) {
    const limit = schema as number;
    const isMaximum = keyword === 'maxProperties';
    const message = `must NOT have ${isMaximum ? 'more' : 'fewer'} than ${limit} properties`;
    return (data, at, run) => {
      const count = Object.keys(data as object).length;
      if (!(isMaximum ? count > limit : count < limit)) return true;
      reportError(it, at, run, keyword, { limit }, message);
      return false;
    };
  },
};

function missingError(keyword: KeywordContext, at: Parameters<KeywordCheck>[1], run: Parameters<KeywordCheck>[2], name: string): void {
  reportError(keyword.it, at, run, 'required', { missingProperty: name }, `must have required property '${name}'`);
}

/**
 * With allErrors off, ajv finds the first missing name with `data[name] === undefined && (missing =
 * name)`, a chain that reads a missing `""` as falsy and goes on: `""` is never missing there. From
 * ajv's `loopRequired` (200) names on it loops instead, and `""` counts.
 */
const loopRequired = 200;

export const requiredKeyword: KeywordDefinition = {
  schemaType: ['array'],
  compile(keyword: KeywordContext) {
    const names = keyword.schema as string[];
    if (names.length === 0) return undefined;
    const { allErrors } = keyword.it;
    const skipsEmptyName = !allErrors && names.length < loopRequired;
    return (data, at, run) => {
      let valid = true;
      for (const name of names) {
        if (member(data, name) !== undefined || (skipsEmptyName && name === '')) continue;
        missingError(keyword, at, run, name);
        valid = false;
        if (!allErrors) break;
      }
      return valid;
    };
  },
};

/**
 * `propertyNames`: each name is checked as a string, its errors carrying `propertyName`, followed by
 * the keyword's own error. With allErrors off ajv then reads the loop's `var valid`, `undefined`
 * for an object without properties, and skips the rest of the object keywords.
 */
export const propertyNamesKeyword: KeywordDefinition = {
  schemaType: ['object', 'boolean'],
  compile(keyword: KeywordContext) {
    const { it } = keyword;
    if (alwaysValidSchema(keyword.schema)) return undefined;
    const slot = it.frame.slots++;
    const check = keyword.subschema({ keyword: 'propertyNames' });
    return (data, at, run) => {
      for (const name in data as object) {
        at.slots[slot] = check(name, { path: at.path, propertyName: name, slots: at.slots }, run);
        if (!at.slots[slot]) {
          reportError(it, at, run, 'propertyNames', { propertyName: name }, 'property name must be valid');
          if (!it.allErrors) break;
        }
      }
      return it.allErrors || Boolean(at.slots[slot]);
    };
  },
};

export const additionalPropertiesKeyword: KeywordDefinition = {
  schemaType: ['boolean', 'object'],
  allowUndefined: true,
  compile(keyword: KeywordContext): KeywordCheck | undefined {
    const { it, schema, parentSchema } = keyword;
    if (alwaysValidSchema(schema)) return undefined;
    const properties = schemaProperties(parentSchema.properties);
    const propertiesMap = parentSchema.properties as object;
    const patterns = schemaProperties(parentSchema.patternProperties).map(schemaPattern);
    // ajv tests more than 8 names with hasOwnProperty on the map, which keeps an own `__proto__`.
    const isDefined =
      properties.length > 8 ? (name: string) => Object.hasOwn(propertiesMap, name) : (name: string) => properties.includes(name);
    const isAdditional = (name: string): boolean => !(isDefined(name) || patterns.some((pattern) => pattern.test(name)));
    const check: Check | undefined = schema === false ? undefined : keyword.subschema({ keyword: 'additionalProperties' });
    return (data, at, run) => {
      const start = run.errors.length;
      for (const name in data as object) {
        if (!isAdditional(name)) continue;
        if (!check) {
          reportError(it, at, run, 'additionalProperties', { additionalProperty: name }, 'must NOT have additional properties');
          if (!it.allErrors) break;
        } else if (!check(member(data, name), memberAt(at, name), run) && !it.allErrors) {
          break;
        }
      }
      return run.errors.length === start;
    };
  },
};

export const dependenciesKeyword: KeywordDefinition = {
  schemaType: ['object'],
  compile(keyword: KeywordContext) {
    const { it } = keyword;
    const map = keyword.schema as SchemaObject;
    const propertyDependencies: Record<string, string[]> = {};
    const schemaDependencies: Record<string, unknown> = {};
    for (const name in map) {
      if (name === '__proto__') continue;
      const value = map[name];
      if (Array.isArray(value)) propertyDependencies[name] = value as string[];
      else schemaDependencies[name] = value;
    }
    const checks: KeywordCheck[] = [];
    for (const name in propertyDependencies) {
      const required = propertyDependencies[name] as string[];
      if (required.length === 0) continue;
      const params = { property: name, depsCount: required.length, deps: required.join(', ') };
      const message = `must have ${required.length === 1 ? 'property' : 'properties'} ${params.deps} when property ${name} is present`;
      checks.push((data, at, run) => {
        if (member(data, name) === undefined) return true;
        let valid = true;
        for (const dependency of required) {
          if (member(data, dependency) !== undefined || (!it.allErrors && dependency === '')) continue;
          const { property, depsCount, deps } = params;
          reportError(it, at, run, 'dependencies', { property, missingProperty: dependency, depsCount, deps }, message);
          valid = false;
          if (!it.allErrors) break;
        }
        return valid;
      });
    }
    for (const name in schemaDependencies) {
      if (alwaysValidSchema(schemaDependencies[name])) continue;
      const check = keyword.subschema({ keyword: 'dependencies', schemaProperty: name });
      checks.push((data, at, run) => member(data, name) === undefined || check(data, at, run));
    }
    return (data, at, run) => {
      let valid = true;
      for (const check of checks) {
        if (check(data, at, run)) continue;
        valid = false;
        if (!it.allErrors) break;
      }
      return valid;
    };
  },
};

export const propertiesKeyword: KeywordDefinition = {
  schemaType: ['object'],
  compile(keyword: KeywordContext) {
    const { it } = keyword;
    const map = keyword.schema as SchemaObject;
    const checks: { name: string; check: Check }[] = [];
    for (const name of schemaProperties(map)) {
      if (alwaysValidSchema(map[name])) continue;
      checks.push({ name, check: keyword.subschema({ keyword: 'properties', schemaProperty: name }) });
    }
    if (checks.length === 0) return undefined;
    return (data, at, run) => {
      let valid = true;
      for (const { name, check } of checks) {
        const value = member(data, name);
        if (value === undefined || check(value, memberAt(at, name), run)) continue;
        valid = false;
        if (!it.allErrors) break;
      }
      return valid;
    };
  },
};

export const patternPropertiesKeyword: KeywordDefinition = {
  schemaType: ['object'],
  compile(keyword: KeywordContext) {
    const { it } = keyword;
    const map = keyword.schema as SchemaObject;
    const patterns = schemaProperties(map);
    const alwaysValidPatterns = patterns.filter((pattern) => alwaysValidSchema(map[pattern]));
    if (patterns.length === 0 || alwaysValidPatterns.length === patterns.length) return undefined;
    const compiled: { regExp: RegExp; check: Check | undefined }[] = [];
    for (const pattern of patterns) {
      const regExp = schemaPattern(pattern);
      const check = alwaysValidPatterns.includes(pattern)
        ? undefined
        : keyword.subschema({ keyword: 'patternProperties', schemaProperty: pattern });
      compiled.push({ regExp, check });
    }
    return (data, at, run) => {
      for (const { regExp, check } of compiled) {
        let valid = true;
        for (const name in data as object) {
          if (!regExp.test(name) || !check) continue;
          valid = check(member(data, name), memberAt(at, name), run);
          if (!it.allErrors && !valid) break;
        }
        if (!it.allErrors && !valid) return false;
      }
      return true;
    };
  },
};
