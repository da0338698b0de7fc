/**
 * Route parameter constraints (`{id:int}`, `{v:range(1,10)}`, `{s:regex(...)}`) with the
 * semantics of ASP.NET Core's inline constraints, as used in Azure Functions http routes.
 *
 * @module
 */

/** Thrown for an invalid route template. */
export class RouteTemplateError extends Error {}

/** A route parameter constraint such as `int` or `range(1,10)`. */
export interface RouteConstraint {
  name: string;
  args: string[];
  /** Returns whether a (decoded) parameter value satisfies the constraint. */
  test(value: string): boolean;
}

const INT32 = /^-?\d{1,10}$/;
const INTEGER = /^-?\d+$/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const GUID = /^[{(]?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}[})]?$/i;

function inLongRange(v: string): boolean {
  if (!INTEGER.test(v)) return false;
  const n = BigInt(v);
  return n >= -(2n ** 63n) && n < 2n ** 63n;
}

/**
 * Creates a constraint by name (case-insensitive): `int`, `long`, `bool`, `guid`, `alpha`,
 * `double`, `float`, `decimal`, `datetime`, `required`, `min(n)`, `max(n)`, `range(a,b)`,
 * `length(n)`, `length(a,b)`, `minlength(n)`, `maxlength(n)`, `regex(expr)` (case-insensitive).
 * @throws RouteTemplateError for unknown constraint names
 */
export function makeConstraint(name: string, args: string[]): RouteConstraint {
  const nums = args.map(Number);
  const [a = NaN, b = NaN] = nums;
  const lower = name.toLowerCase();
  const tests: Record<string, (v: string) => boolean> = {
    int: (v) => INT32.test(v) && Number(v) >= -(2 ** 31) && Number(v) < 2 ** 31,
    long: inLongRange,
    bool: (v) => /^(true|false)$/i.test(v),
    guid: (v) => GUID.test(v),
    alpha: (v) => /^[a-z]+$/i.test(v),
    double: (v) => NUMBER.test(v),
    float: (v) => NUMBER.test(v),
    decimal: (v) => NUMBER.test(v),
    datetime: (v) => !Number.isNaN(Date.parse(v)),
    required: (v) => v.length > 0,
    min: (v) => inLongRange(v) && Number(v) >= a,
    max: (v) => inLongRange(v) && Number(v) <= a,
    range: (v) => inLongRange(v) && Number(v) >= a && Number(v) <= b,
    length: (v) => (args.length === 1 ? v.length === a : v.length >= a && v.length <= b),
    minlength: (v) => v.length >= a,
    maxlength: (v) => v.length <= a,
  };
  if (lower === 'regex') {
    let re: RegExp;
    try {
      re = new RegExp(args[0] ?? '', 'i');
    } catch (err) {
      throw new RouteTemplateError(`Invalid regex constraint: ${(err as Error).message}`);
    }
    return { name, args, test: (v) => re.test(v) };
  }
  const test = tests[lower];
  if (!test) throw new RouteTemplateError(`Unknown route constraint "${name}"`);
  return { name, args, test };
}
