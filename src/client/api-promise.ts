/**
 * What a call of the SDK returns: a Promise of the parsed result that can also hand back the HTTP
 * response it came from (`await client.videos.create(...).withResponse()`), for the headers a
 * result object has no place for: `Idempotent-Replayed`, `x-request-id`.
 */

/** The HTTP response a result came from. */
export interface ResponseInfo {
  readonly status: number;
  readonly headers: Headers;
  /** `x-request-id` of the response, to quote in a report. */
  readonly requestId: string | undefined;
  /**
   * `Idempotent-Replayed: true`: the create carried an `idempotencyKey` already used with the same
   * body, so nothing was created and the result is the original task in its current state.
   */
  readonly idempotentReplayed: boolean;
}

export interface WithResponse<T> {
  readonly data: T;
  readonly response: ResponseInfo;
}

export function responseInfo(status: number, headers: Headers): ResponseInfo {
  return {
    status,
    headers,
    requestId: headers.get('x-request-id') ?? undefined,
    idempotentReplayed: headers.get('idempotent-replayed')?.trim().toLowerCase() === 'true',
  };
}

export class APIPromise<T> implements Promise<T> {
  readonly #inner: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  constructor(inner: Promise<WithResponse<T>>) {
    this.#inner = inner;
  }

  /** The result together with the response's status and headers. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#inner;
  }

  #result(): Promise<T> {
    // Made on first use only, so a caller of withResponse() alone leaves no unhandled rejection behind.
    this.#data ??= this.#inner.then((value) => value.data);
    return this.#data;
  }

  then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#result().then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#result().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#result().finally(onfinally);
  }

  get [Symbol.toStringTag](): string {
    return 'APIPromise';
  }
}
