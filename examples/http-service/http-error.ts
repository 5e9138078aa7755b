const marker = Symbol.for('actorloop.example.HttpError');

/**
 * A request the service answers with an error status: `field` names the part of the request that
 * was wrong (a body field, a path parameter), `code` says why when there is no field to name.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly [marker] = true;

  constructor(
    readonly status: number,
    message: string,
    readonly details: { field?: string; code?: string } = {},
  ) {
    super(message);
  }

  static isInstance(error: unknown): error is HttpError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
