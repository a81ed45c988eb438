/**
 * One error hierarchy for the whole project (after KafkaJS): every error has a `name`, an optional `cause`,
 * context fields and a `retriable` flag that the one retry helper reads. Unknown throws are normalised at each
 * boundary with {@link GamedataError.from}.
 */

export interface GamedataErrorOptions {
  cause?: unknown;
  /** Whether trying the same operation again may succeed. @default false */
  retriable?: boolean;
}

export class GamedataError extends Error {
  override name = 'GamedataError';
  readonly retriable: boolean;

  constructor(message: string, options: GamedataErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retriable = options.retriable ?? false;
  }

  /** Normalises anything thrown into a GamedataError (kept as is when it already is one). */
  static from(error: unknown): GamedataError {
    if (error instanceof GamedataError) return error;
    if (error instanceof Error) {
      if (error.name === 'AbortError' || error.name === 'TimeoutError') {
        return new AbortedError(error.message, { cause: error });
      }
      return new GamedataError(error.message, { cause: error });
    }
    return new GamedataError(String(error));
  }
}

/** A setting (env, config file, CLI flag or option object) is invalid. `issues` lists every problem. */
export class ConfigError extends GamedataError {
  override name = 'ConfigError';
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
    options: GamedataErrorOptions = {},
  ) {
    super(message, options);
  }
}

/** The caller aborted (AbortSignal) or a timeout fired. Never retried. */
export class AbortedError extends GamedataError {
  override name = 'AbortedError';
}

/** A slice stopped early because of shutdown; its checkpoint is saved and it must run again. Never retried. */
export class SliceInterruptedError extends AbortedError {
  override name = 'SliceInterruptedError';
}

/** A network-level failure talking to the upstream (reset, refused, DNS, timeout). Retriable. */
export class NetworkError extends GamedataError {
  override name = 'NetworkError';
  /**
   * The errno / undici code when no connection could be made at all (`ECONNREFUSED`, `ENOTFOUND`, ...): the
   * request reached no upstream. Undefined for failures after connecting (reset, timeout). Set where it is made.
   */
  readonly connectFailure: string | undefined;
  constructor(
    message: string,
    readonly url: string,
    options: GamedataErrorOptions & { connectFailure?: string | undefined } = {},
  ) {
    super(message, { retriable: options.retriable ?? true, cause: options.cause });
    this.connectFailure = options.connectFailure;
  }

  /** Whether the request reached no upstream (no connection was made). */
  get unreachable(): boolean {
    return this.connectFailure !== undefined;
  }
}

/** The upstream answered with an HTTP error (whole request) or a procedure error (one slot of a batch). */
export class UpstreamError extends GamedataError {
  override name = 'UpstreamError';
  constructor(
    message: string,
    readonly status: number,
    readonly procedure: string | undefined,
    readonly code: string | undefined,
    options: GamedataErrorOptions & { retryAfterMs?: number } = {},
  ) {
    super(message, { retriable: options.retriable ?? isRetriableStatus(status), cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
  }
  readonly retryAfterMs: number | undefined;
}

/** 404 for an id that does not exist. */
export class NotFoundError extends UpstreamError {
  override name = 'NotFoundError';
}

/** 429: the rate limit was hit. Retriable after `retryAfterMs`. */
export class RateLimitError extends UpstreamError {
  override name = 'RateLimitError';
}

/** A response (or a record inside it) does not have the shape the spec promises. `path` names where. */
export class ValidationError extends GamedataError {
  override name = 'ValidationError';
  constructor(
    message: string,
    readonly path: string,
    options: GamedataErrorOptions = {},
  ) {
    super(message, options);
  }
}

/**
 * A schema already has the field a change would add (`withOptionalField`): decided by this class where the error is
 * made, never by its message (issue 48, item 7). `path` is the record's path.
 */
export class FieldExistsError extends ValidationError {
  override name = 'FieldExistsError';
}

/** A batch answer had no result for a caller's slot. */
export class MissingResultError extends GamedataError {
  override name = 'MissingResultError';
}

/** Why a record could not be encoded (the `reason` of an {@link EncodingError}, a dead-letter header). */
export type EncodingFailureReason =
  'missing-id' | 'wrong-type' | 'invalid-date' | 'too-large' | 'not-encodable' | 'not-a-record';

/** A record could not be encoded to Avro. Goes to the dead-letter topic with `path` and the reason. */
export class EncodingError extends GamedataError {
  override name = 'EncodingError';
  /** The kind of failure. @default 'not-encodable' */
  readonly reason: EncodingFailureReason;
  constructor(
    message: string,
    readonly path: string,
    options: GamedataErrorOptions & { reason?: EncodingFailureReason } = {},
  ) {
    super(message, options);
    this.reason = options.reason ?? 'not-encodable';
  }
}

/** What a security failure is: a refused credential, a missing permission, a certificate, a name, a handshake. */
export type SecurityFailureKind =
  'authentication' | 'authorisation' | 'certificate' | 'host name' | 'TLS handshake';

/** Kafka, the schema registry or Redis failed or could not be reached. */
export class ServiceError extends GamedataError {
  override name = 'ServiceError';
  /**
   * Set where the error is made when it is a security failure (`securityFailure` reads it, issue 48: the flag decides,
   * never the message). @default undefined
   */
  readonly security: SecurityFailureKind | undefined;
  constructor(
    message: string,
    readonly service:
      'kafka' | 'schema-registry' | 'redis' | 'upstream' | 'kafka-connect' | 'postgres' | 'iceberg',
    options: GamedataErrorOptions & { security?: SecurityFailureKind } = {},
  ) {
    super(message, options);
    this.security = options.security;
  }
}

/**
 * Another owner took the slice (exactly-once delivery): its transactional producer fenced this one. The slice must
 * stop at once with no further side effects (no seen marks, counters or checkpoints); whoever owns it now resumes
 * from the last committed checkpoint. Not retriable in-process.
 */
export class SliceFencedError extends GamedataError {
  override name = 'SliceFencedError';
  constructor(
    message: string,
    readonly sliceKey: string,
    options: GamedataErrorOptions = {},
  ) {
    super(message, { ...options, retriable: false });
  }
}

/**
 * An installed library is not the release one of the project's hooks into its internals was written for, or lacks
 * what the hook uses (avsc's `Type.__reset`, bullmq's private worker parts, `@confluentinc/schemaregistry`'s deep
 * paths): the process refuses to run with the hook off. `library` names the package. Never retriable.
 */
export class LibraryPatchError extends GamedataError {
  override name = 'LibraryPatchError';
  constructor(
    message: string,
    readonly library: string,
    options: GamedataErrorOptions = {},
  ) {
    super(message, { ...options, retriable: false });
  }
}

/**
 * The installed kafkajs lacks what one of the project's patches replaces (a release other than the one the patches
 * were written for, `KAFKAJS_PATCHED_VERSION` in `output/kafka/kafkajs-patches/`). Never retriable.
 */
export class KafkajsPatchError extends LibraryPatchError {
  override name = 'KafkajsPatchError';
  constructor(message: string, options: GamedataErrorOptions = {}) {
    super(message, 'kafkajs', options);
  }
}

/** An object was used after its `close()` (a probe, a producer pool). Never retriable. */
export class ClosedError extends GamedataError {
  override name = 'ClosedError';
}

/**
 * A transactional producer of the pool was replaced (fenced, or its transaction's end unknown): every commit of its
 * old generation fails with this. Not retriable in-process (the slice is taken again).
 */
export class ProducerReplacedError extends GamedataError {
  override name = 'ProducerReplacedError';
  constructor(
    readonly transactionalId: string,
    options: GamedataErrorOptions = {},
  ) {
    super(`producer ${transactionalId} was replaced`, options);
  }
}

/**
 * A commit of the producer pool failed: `error` is what to tell the slice, `fenced` whether the member producer was
 * fenced or replaced (the slice then fails as fenced). `retriable` as `error`'s.
 */
export class PoolCommitError extends GamedataError {
  override name = 'PoolCommitError';
  constructor(
    readonly error: Error,
    readonly fenced: boolean,
  ) {
    super(error.message, { cause: error, retriable: error instanceof GamedataError && error.retriable });
  }
}

/** HTTP statuses worth another try: 408, 409, 425, 429 and every 5xx. */
export function isRetriableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

/**
 * A Kafka transaction control call (InitProducerId, a transaction's sends and EndTxn, a fence) did not end within its
 * deadline. kafkajs retries them as long as its retry settings allow, and one stuck call held every slice sharing the
 * producer; after the deadline the producer is replaced and the slice retried (what the call did is read back from
 * Kafka's checkpoint by the next session).
 */
export class ControlCallTimeoutError extends ServiceError {
  override name = 'ControlCallTimeoutError';
  constructor(message: string, options: GamedataErrorOptions = {}) {
    super(message, 'kafka', { ...options, retriable: true });
  }
}
