/**
 * The one trivial tool both sides run: `add {a, b}`, the same zod schema, the same JSON Schema
 * on the wire (converted the way actorloop converts it), the same result. `gate` lets S3 block
 * a call until released.
 */
import { toJSONSchema, z } from 'zod';

export const addName = 'add';
export const addDescription = 'Add two numbers';
export const addSchema = z.object({ a: z.number(), b: z.number() });
export type AddArgs = z.output<typeof addSchema>;

/** The JSON Schema sent as the tool's `parameters`, converted with the options actorloop uses. */
export function addJsonSchema(): Record<string, unknown> {
  const schema = toJSONSchema(addSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** Blocks calls whose `a` equals `blockAtRound` until `release()`; counts the blocked ones. `reset()` closes it again. */
export type Gate = { blockAtRound: number; armed: boolean; blocked: number; wait: Promise<void>; release(): void; reset(): void };

export function createGate(blockAtRound: number): Gate {
  const gate: Gate = {
    blockAtRound,
    armed: true,
    blocked: 0,
    wait: Promise.resolve(),
    release: () => {},
    reset() {
      gate.blocked = 0;
      gate.wait = new Promise<void>((resolve) => {
        gate.release = resolve;
      });
    },
  };
  gate.reset();
  return gate;
}

/** The tool's body, shared by both sides. */
export function addExecutor(gate?: Gate): (args: AddArgs) => number | Promise<number> {
  if (!gate) return ({ a, b }) => a + b;
  return async ({ a, b }) => {
    if (gate.armed && a === gate.blockAtRound) {
      gate.blocked++;
      await gate.wait;
    }
    return a + b;
  };
}
