import { describe, expect, it } from 'vitest';
import { envReferenceName, interpolateEnv } from './interpolate.js';

const WHOLE_REFERENCES = ['${GROQ_API_KEY}', '${GROQ_API_KEY:-}', '${X:-abc}', '${OLLAMA_URL:-http://localhost:11434}'];
const NOT_REFERENCES = ['sk-literal', '', '$${X}', 'Bearer ${X}', '${X}-suffix', '${X}${Y}', '${1X}', '$X', 'os.environ/X'];

describe('envReferenceName', () => {
  it('names the variable of a value that is one ${VAR} or ${VAR:-default} reference', () => {
    expect(WHOLE_REFERENCES.map(envReferenceName)).toEqual(['GROQ_API_KEY', 'GROQ_API_KEY', 'X', 'OLLAMA_URL']);
  });

  it('names nothing for a literal or text around a reference', () => {
    for (const text of NOT_REFERENCES) expect(envReferenceName(text), text).toBeUndefined();
  });

  it('agrees with the expansion: a named value is exactly its variable once that is set', () => {
    for (const text of WHOLE_REFERENCES) {
      const name = envReferenceName(text)!;
      expect(interpolateEnv(text, { [name]: 'from-env' }), text).toEqual({ value: 'from-env', variables: [name] });
    }
    expect(interpolateEnv('sk-literal', { X: 'from-env' }).value).toBe('sk-literal');
  });
});
