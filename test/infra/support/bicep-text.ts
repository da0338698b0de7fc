/**
 * Lexical helpers for the regular subset of Bicep that infra-bicep/ is written in: single-quoted strings
 * (with `\'` escapes and `${...}` interpolation), `//` and `/* *\/` comments, and brackets. No Bicep
 * compiler runs offline, so the contract test reads the files with these and {@link readBicep}.
 * @module
 */

const CLOSE: Record<string, string> = { '{': '}', '[': ']', '(': ')' };

/** Index just past the string literal starting at `i` (a `'`). Handles escapes, interpolation and `'''` strings. */
export function skipString(text: string, i: number): number {
  if (text.startsWith("'''", i)) {
    const end = text.indexOf("'''", i + 3);
    if (end < 0) throw new Error(`unterminated ''' string at ${i}`);
    return end + 3;
  }
  let j = i + 1;
  while (j < text.length) {
    const c = text[j];
    if (c === '\\') j += 2;
    else if (c === "'") return j + 1;
    else if (c === '$' && text[j + 1] === '{') j = matchBracket(text, j + 1) + 1;
    else j++;
  }
  throw new Error(`unterminated string at ${i}`);
}

/** Index of the bracket closing the one at `open` (`{`, `[` or `(`), skipping strings. */
export function matchBracket(text: string, open: number): number {
  const stack: string[] = [];
  let i = open;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "'") {
      i = skipString(text, i);
      continue;
    }
    if (c in CLOSE) stack.push(CLOSE[c] as string);
    else if (c === '}' || c === ']' || c === ')') {
      if (stack.pop() !== c) throw new Error(`unbalanced '${c}' at ${i}`);
      if (stack.length === 0) return i;
    }
    i++;
  }
  throw new Error(`unclosed bracket at ${open}`);
}

/** The text with every comment replaced by spaces (newlines kept, so offsets and lines stay put). */
export function stripComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "'") {
      const end = skipString(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new Error(`unterminated comment at ${i}`);
      out += text.slice(i, end + 2).replace(/[^\n]/g, ' ');
      i = end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * End (exclusive) of the expression starting at `start`: the first newline, `,` or closing bracket at
 * bracket depth 0, except that a next line starting with `?` or `:` continues a ternary.
 */
export function expressionEnd(text: string, start: number): number {
  let i = start;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "'") i = skipString(text, i);
    else if (c in CLOSE) i = matchBracket(text, i) + 1;
    else if (c === ',' || c === '}' || c === ']' || c === ')') return i;
    else if (c === '\n') {
      const rest = /^\n[ \t]*([?:])/.exec(text.slice(i, i + 200));
      if (rest === null) return i;
      i += rest[0].length;
    } else i++;
  }
  return i;
}

/** Splits the inside of a bracketed list (`[...]`, `{...}`, `(...)` text including brackets) into top-level items. */
function items(bracketed: string): string[] {
  const inner = bracketed.trim();
  const body = inner.slice(1, matchBracket(inner, 0));
  const out: string[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i] as string;
    if (/[\s,]/.test(c)) {
      i++;
      continue;
    }
    const end = expressionEnd(body, i);
    out.push(body.slice(i, end).trim());
    i = end;
  }
  return out;
}

/** Items of an array literal `[ a \n b ]` or `[a, b]`. */
export function arrayItems(arrayText: string): string[] {
  return items(arrayText);
}

/** Arguments of a call such as `concat(a, [b])`, given the text from the function name on. */
export function callArgs(callText: string): string[] {
  const open = callText.indexOf('(');
  return items(callText.slice(open));
}

/** Top-level properties of an object literal `{ key: value ... }`; quoted keys are unquoted. */
export function objectProperties(objectText: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of items(objectText)) {
    const m = /^('(?:[^'\\]|\\.)*'|[A-Za-z_][A-Za-z0-9_]*)\s*:\s*/.exec(item);
    if (m === null) throw new Error(`not a property: ${item.slice(0, 60)}`);
    const key = (m[1] as string).startsWith("'") ? (m[1] as string).slice(1, -1) : (m[1] as string);
    out.set(key, item.slice(m[0].length).trim());
  }
  return out;
}

/** The value of a string literal without interpolation, else undefined. */
export function stringLiteral(expr: string): string | undefined {
  const m = /^'((?:[^'\\$]|\\.|\$(?!\{))*)'$/.exec(expr.trim());
  return m === null ? undefined : (m[1] as string).replace(/\\(.)/g, '$1');
}
