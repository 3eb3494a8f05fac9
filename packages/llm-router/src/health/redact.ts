/**
 * Error text from upstreams and sockets ends up in /v1/health, logs and events.
 * Strip anything that looks like a credential before it is shown: the known
 * keys of the current config, bearer tokens, and `key=` query parameters.
 */
const MAX_LENGTH = 500;

export function redactSecrets(text: string, secrets: Iterable<string | undefined> = []): string {
  let result = text;
  for (const secret of secrets) {
    // Very short "keys" would blank out ordinary words; real keys are long.
    if (secret !== undefined && secret.length >= 6) result = result.split(secret).join('[redacted]');
  }
  result = result
    .replace(/\b(bearer\s+)[^\s"',;]+/gi, '$1[redacted]')
    .replace(/\b((?:api[_-]?key|access[_-]?token|token|key)=)[^&\s"',;]+/gi, '$1[redacted]');
  return result.length > MAX_LENGTH ? `${result.slice(0, MAX_LENGTH)}…` : result;
}
