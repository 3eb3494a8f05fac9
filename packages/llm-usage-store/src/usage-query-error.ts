/** A query the caller got wrong (bad limit, since after until, a foreign cursor): a 400, never a 500. */
export class UsageQueryError extends Error {
  override readonly name = 'UsageQueryError';
  readonly code = 'invalid_usage_query';

  constructor(
    message: string,
    /** The query parameter at fault. */
    readonly param: string,
  ) {
    super(message);
  }
}

export function isUsageQueryError(error: unknown): error is UsageQueryError {
  return error instanceof Error && error.name === 'UsageQueryError' && (error as { code?: unknown }).code === 'invalid_usage_query';
}
