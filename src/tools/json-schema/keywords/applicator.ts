import { alwaysValidSchema } from '../always-valid.js';
import { reportError } from '../report.js';
import type { Check, KeywordCheck, KeywordContext, KeywordDefinition } from '../types.js';

// The combinators, with ajv's short-circuits: `anyOf` stops at the first valid branch, `oneOf` at the
// second; a passing `anyOf`/`oneOf`/`not` drops its branches' errors; `not` and `if` evaluate their
// schema with allErrors off (only whether it passes matters) and drop what it reported.

export const notKeyword: KeywordDefinition = {
  schemaType: ['object', 'boolean'],
  compile(keyword: KeywordContext): KeywordCheck {
    const { it } = keyword;
    const fail: KeywordCheck = (_data, at, run) => {
      reportError(it, at, run, 'not', {}, 'must NOT be valid');
      return false;
    };
    if (alwaysValidSchema(keyword.schema)) return fail;
    const check = keyword.subschema({ keyword: 'not', allErrors: false });
    return (data, at, run) => {
      const start = run.errors.length;
      if (check(data, at, run)) return fail(data, at, run);
      run.errors.length = start;
      return true;
    };
  },
};

export const anyOfKeyword: KeywordDefinition = {
  schemaType: ['array'],
  compile(keyword: KeywordContext): KeywordCheck | undefined {
    const { it } = keyword;
    const branches = keyword.schema as unknown[];
    // A branch that always passes makes the whole keyword pass: ajv compiles none of it.
    if (branches.some(alwaysValidSchema)) return undefined;
    const checks = branches.map((_branch, index) => keyword.subschema({ keyword: 'anyOf', schemaProperty: index }));
    return (data, at, run) => {
      const start = run.errors.length;
      let valid = false;
      for (const check of checks) {
        valid = check(data, at, run) || valid;
        if (valid) break;
      }
      if (!valid) {
        reportError(it, at, run, 'anyOf', {}, 'must match a schema in anyOf');
        return false;
      }
      run.errors.length = start;
      return true;
    };
  },
};

export const oneOfKeyword: KeywordDefinition = {
  schemaType: ['array'],
  compile(keyword: KeywordContext): KeywordCheck {
    const { it } = keyword;
    const branches = keyword.schema as unknown[];
    const checks: (Check | undefined)[] = branches.map((branch, index) =>
      alwaysValidSchema(branch) ? undefined : keyword.subschema({ keyword: 'oneOf', schemaProperty: index }),
    );
    return (data, at, run) => {
      const start = run.errors.length;
      let valid = false;
      let passing: number | [unknown, number] | null = null;
      for (const [index, check] of checks.entries()) {
        const branchValid = check ? check(data, at, run) : true;
        if (index > 0 && branchValid && valid) {
          valid = false;
          passing = [passing, index];
          break;
        }
        if (branchValid) {
          valid = true;
          passing = index;
        }
      }
      if (!valid) {
        reportError(it, at, run, 'oneOf', { passingSchemas: passing }, 'must match exactly one schema in oneOf');
        return false;
      }
      run.errors.length = start;
      return true;
    };
  },
};

export const allOfKeyword: KeywordDefinition = {
  schemaType: ['array'],
  compile(keyword: KeywordContext): KeywordCheck {
    const { it } = keyword;
    const checks: Check[] = [];
    for (const [index, branch] of (keyword.schema as unknown[]).entries()) {
      if (!alwaysValidSchema(branch)) checks.push(keyword.subschema({ keyword: 'allOf', schemaProperty: index }));
    }
    return (data, at, run) => {
      for (const check of checks) {
        if (!check(data, at, run) && !it.allErrors) return false;
      }
      return true;
    };
  },
};

function hasClause(keyword: KeywordContext, clause: 'then' | 'else'): boolean {
  const schema = keyword.parentSchema[clause];
  return schema !== undefined && !alwaysValidSchema(schema);
}

export const ifKeyword: KeywordDefinition = {
  schemaType: ['object', 'boolean'],
  compile(keyword: KeywordContext): KeywordCheck | undefined {
    const { it } = keyword;
    const hasThen = hasClause(keyword, 'then');
    const hasElse = hasClause(keyword, 'else');
    if (!hasThen && !hasElse) return undefined;
    const condition = keyword.subschema({ keyword: 'if', allErrors: false });
    const thenCheck = hasThen ? keyword.subschema({ keyword: 'then' }) : undefined;
    const elseCheck = hasElse ? keyword.subschema({ keyword: 'else' }) : undefined;
    return (data, at, run) => {
      const start = run.errors.length;
      const conditionValid = condition(data, at, run);
      run.errors.length = start;
      const clause = conditionValid ? 'then' : 'else';
      const check = conditionValid ? thenCheck : elseCheck;
      if (!check || check(data, at, run)) return true;
      reportError(it, at, run, 'if', { failingKeyword: clause }, `must match "${clause}" schema`);
      return false;
    };
  },
};

export const thenElseKeyword: KeywordDefinition = { schemaType: ['object', 'boolean'] };
