/**
 * The registry keys are the ones each error class used on its own before the base existed, so an
 * error from an older copy of actorloop still passes the newer `isInstance` of its class, and the
 * other way round.
 */
const markerOf = (errorName: string): symbol => Symbol.for(`actorloop.error.${errorName}`);

/**
 * The base of every error actorloop throws. `name` is the class's `errorName`; each class adds only
 * its own fields (`code`, `option`, `conversationId`, …), and `cause` is the standard one.
 *
 * `isInstance` answers for the class it is called on, and works when the error comes from another
 * copy of actorloop (two versions in `node_modules`, a bundled copy, a test's fresh module graph),
 * where `instanceof` says false: `ActorloopError.isInstance(error)` is true for any actorloop
 * error, `HaltError.isInstance(error)` only for a `HaltError` (or a subclass of it).
 *
 * A subclass of your own gets its own `isInstance` by declaring a `static errorName` of its own;
 * without one, its `isInstance` falls back to `instanceof`.
 *
 * @example
 * ```ts
 * try {
 *   await host.send('c-42', { type: 'user.message', content: 'hi' });
 * } catch (error) {
 *   if (EventRejectedError.isInstance(error)) reply.status(409).send(error.code);
 *   else if (ActorloopError.isInstance(error)) reply.status(500).send(error.name);
 *   else throw error;
 * }
 *
 * class QuotaError extends ActorloopError {
 *   static override readonly errorName = 'QuotaError';
 *   constructor(readonly customerId: string) {
 *     super(`customer ${customerId} is over quota`);
 *   }
 * }
 * ```
 */
export class ActorloopError extends Error {
  /** The class's name, the `name` of its errors and the key of its `isInstance` across copies. */
  static readonly errorName: string = 'ActorloopError';
  override readonly name: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.errorName;
    // One marker per class of the chain, so that the `isInstance` of a parent class answers true too.
    for (let type: object | null = new.target; type !== null && type !== Function.prototype; type = Object.getPrototypeOf(type)) {
      if (Object.hasOwn(type, 'errorName'))
        (this as unknown as Record<symbol, true>)[markerOf((type as typeof ActorloopError).errorName)] = true;
    }
  }

  /**
   * True for an error of this class (or a subclass of it), also one from another copy of actorloop.
   * Bound to its class, so it can be passed on as it is: `errors.filter(HaltError.isInstance)`.
   */
  declare static readonly isInstance: <T extends ActorloopError>(this: { readonly prototype: T }, error: unknown) => error is T;
}

const boundChecks = new WeakMap<object, (error: unknown) => boolean>();

// A getter, not a method: read from a class, it hands out a check bound to that class, so `this`
// is not lost when the check is passed around unbound (a `filter`, a `toSatisfy`).
Object.defineProperty(ActorloopError, 'isInstance', {
  configurable: true,
  get(this: { readonly prototype: unknown }) {
    let check = boundChecks.get(this);
    if (check === undefined) {
      check = (error) => isOfClass(this, error);
      boundChecks.set(this, check);
    }
    return check;
  },
});

function isOfClass(type: { readonly prototype: unknown }, error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  // A subclass without an errorName of its own has no marker of its own: only instanceof can tell it.
  if (!Object.hasOwn(type, 'errorName')) return Object.prototype.isPrototypeOf.call(type.prototype, error);
  return markerOf((type as typeof ActorloopError).errorName) in error;
}
