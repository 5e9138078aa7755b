/**
 * Evaluates an arithmetic expression — numbers, `+ - * / % ^`, parentheses, unary minus, and the
 * functions `sqrt`, `abs`, `round`, `floor`, `ceil` — without `eval`. Throws a `SyntaxError`
 * naming the position of what it could not read.
 *
 * @example
 * ```ts
 * calculate('17*23'); // 391
 * calculate('2^10 / (3 - 1)'); // 512
 * ```
 */
export function calculate(expression: string): number {
  const parser = new Parser(expression);
  const value = parser.expression();
  parser.end();
  if (!Number.isFinite(value)) throw new RangeError(`${expression} is not a finite number (division by zero?)`);
  return value;
}

const functions: Record<string, (value: number) => number> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  round: Math.round,
  floor: Math.floor,
  ceil: Math.ceil,
};

class Parser {
  private position = 0;

  constructor(private readonly text: string) {}

  expression(): number {
    let value = this.term();
    for (;;) {
      if (this.take('+')) value += this.term();
      else if (this.take('-')) value -= this.term();
      else return value;
    }
  }

  end(): void {
    this.skipSpace();
    if (this.position < this.text.length) this.fail(`unexpected "${this.text[this.position]}"`);
  }

  private term(): number {
    let value = this.power();
    for (;;) {
      if (this.take('*') || this.take('×')) value *= this.power();
      else if (this.take('/') || this.take('÷')) value /= this.power();
      else if (this.take('%')) value %= this.power();
      else return value;
    }
  }

  private power(): number {
    const base = this.unary();
    // Right-associative: 2^3^2 is 2^9.
    return this.take('^') || this.take('**') ? base ** this.power() : base;
  }

  private unary(): number {
    if (this.take('-')) return -this.unary();
    if (this.take('+')) return this.unary();
    return this.primary();
  }

  private primary(): number {
    this.skipSpace();
    if (this.take('(')) {
      const value = this.expression();
      if (!this.take(')')) this.fail('expected ")"');
      return value;
    }
    const name = /^[a-z]+/i.exec(this.text.slice(this.position))?.[0];
    if (name) {
      const fn = functions[name.toLowerCase()];
      if (!fn) this.fail(`unknown function "${name}" (known: ${Object.keys(functions).join(', ')})`);
      this.position += name.length;
      if (!this.take('(')) this.fail(`expected "(" after ${name}`);
      const value = this.expression();
      if (!this.take(')')) this.fail('expected ")"');
      return (fn as (value: number) => number)(value);
    }
    const number = /^(?:\d+(?:[.,]\d+)?|[.,]\d+)(?:e[+-]?\d+)?/i.exec(this.text.slice(this.position))?.[0];
    if (!number) this.fail(this.position >= this.text.length ? 'unexpected end' : `unexpected "${this.text[this.position]}"`);
    this.position += (number as string).length;
    return Number((number as string).replace(',', '.'));
  }

  private take(token: string): boolean {
    this.skipSpace();
    if (!this.text.startsWith(token, this.position)) return false;
    // `*` must not take the first half of `**`.
    if (token === '*' && this.text.startsWith('**', this.position)) return false;
    this.position += token.length;
    return true;
  }

  private skipSpace(): void {
    while (this.position < this.text.length && /\s/.test(this.text[this.position] ?? '')) this.position++;
  }

  private fail(message: string): never {
    throw new SyntaxError(`${message} at position ${this.position + 1} of "${this.text}"`);
  }
}
