import { describe, expect, it } from 'vitest';
import { removeEntry, setEntry } from './yaml-edit.js';

const FILE = `# Mana config: comments and alignment must survive an edit.
settings:
  probe_interval: 30s      # aligned comment
  failure_threshold: 2     # another

providers:
  cloud: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_required: false }   # flow, trailing comment

aliases:
  # the quick one
  mana/fast-text: [cloud/a, 'cloud/b']   # list form
  mana/long-form:
    description: "Long prose"
    strategy: failover     # why failover
    chain:
      - cloud/a            # first
      - cloud/b
`;

describe('setEntry', () => {
  it('changing one key of an alias rewrites only that key (its trailing comment stays)', () => {
    const out = setEntry(FILE, 'aliases', 'mana/long-form', { description: 'Long prose', strategy: 'round_robin', chain: ['cloud/a', 'cloud/b'] });
    expect(out).toBe(FILE.replace('strategy: failover     # why', 'strategy: round_robin     # why'));
  });

  it('a new alias is appended at the end of the section, in block style', () => {
    const out = setEntry(FILE, 'aliases', 'gpt-4o', { strategy: 'weighted', chain: [{ target: 'cloud/x', weight: 2 }, 'cloud/y'] });
    expect(out).toBe(`${FILE}  gpt-4o:\n    strategy: weighted\n    chain:\n      - target: cloud/x\n        weight: 2\n      - cloud/y\n`);
  });

  it('removing a key deletes its line; other keys keep their comments', () => {
    const out = setEntry(FILE, 'aliases', 'mana/long-form', { description: 'Long prose', chain: ['cloud/a', 'cloud/b'] });
    expect(out).toBe(FILE.replace('    strategy: failover     # why failover\n', ''));
  });

  it('replacing a changed chain rewrites the chain only', () => {
    const out = setEntry(FILE, 'aliases', 'mana/long-form', { description: 'Long prose', strategy: 'failover', chain: ['cloud/b'] });
    expect(out).toBe(FILE.replace('    chain:\n      - cloud/a            # first\n      - cloud/b\n', '    chain:\n      - cloud/b\n'));
  });

  it('a changed flow-style entry is rewritten in block style where it stood; its trailing comment stays', () => {
    const out = setEntry(FILE, 'providers', 'cloud', { type: 'openai', base_url: 'http://127.0.0.1:10/v1', api_key_required: false });
    expect(out).toBe(
      FILE.replace(
        /  cloud: .*\n/,
        '  cloud:\n    type: openai\n    base_url: http://127.0.0.1:10/v1\n    api_key_required: false   # flow, trailing comment\n',
      ),
    );
  });

  it('creates a missing section at the end of the file', () => {
    const text = 'aliases:\n  mana/x: [a/b]\n';
    expect(setEntry(text, 'providers', 'a', { type: 'openai', base_url: 'http://h/v1' })).toBe(
      `${text}providers:\n  a:\n    type: openai\n    base_url: http://h/v1\n`,
    );
  });

  it('an unchanged value leaves the text identical', () => {
    expect(setEntry(FILE, 'aliases', 'mana/fast-text', ['cloud/a', 'cloud/b'])).toBe(FILE);
  });
});

describe('removeEntry', () => {
  it('removes the entry lines and nothing else', () => {
    expect(removeEntry(FILE, 'aliases', 'mana/fast-text')).toBe(FILE.replace("  mana/fast-text: [cloud/a, 'cloud/b']   # list form\n", ''));
    const out = removeEntry(FILE, 'aliases', 'mana/long-form');
    expect(out).toBe(FILE.replace(/ {2}mana\/long-form:[\s\S]*$/, ''));
  });

  it('an absent entry leaves the text identical', () => {
    expect(removeEntry(FILE, 'providers', 'nope')).toBe(FILE);
  });
});

describe('setEntry: key order', () => {
  it('a key added to an existing map goes where the intended order puts it (strategy before chain)', () => {
    const text = 'aliases:\n  ha:\n    description: x   # kept\n    chain:\n      - a/b\n';
    expect(setEntry(text, 'aliases', 'ha', { description: 'x', strategy: 'weighted', chain: ['a/b', 'a/c'] })).toBe(
      'aliases:\n  ha:\n    description: x   # kept\n    strategy: weighted\n    chain:\n      - a/b\n      - a/c\n',
    );
  });
});
