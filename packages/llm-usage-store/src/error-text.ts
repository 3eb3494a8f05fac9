/**
 * An error as one line for health and logs: its message, and its code when
 * the message does not already name it (better-sqlite3: `database or disk is
 * full (SQLITE_FULL)`). The writer's errors cross from its thread as text, so
 * the code travels inside it.
 */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || code === '' || error.message.includes(code)) return error.message;
  return error.message === '' ? code : `${error.message} (${code})`;
}
