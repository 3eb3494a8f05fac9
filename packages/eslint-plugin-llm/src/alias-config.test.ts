import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AliasConfigError, findAliasConfig, loadAliasConfig } from './alias-config.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function repo(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'alias-config-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'apps', 'llm-gateway'), { recursive: true });
  mkdirSync(path.join(dir, 'apps', 'web', 'src'), { recursive: true });
  return dir;
}

describe('findAliasConfig', () => {
  it('walks up from a source directory to apps/llm-gateway/aliases.yaml', () => {
    const dir = repo();
    expect(findAliasConfig(path.join(dir, 'apps', 'web', 'src'))).toBeUndefined();
    const file = path.join(dir, 'apps', 'llm-gateway', 'aliases.yaml');
    writeFileSync(file, 'aliases: {}\n');
    expect(findAliasConfig(path.join(dir, 'apps', 'web', 'src'))).toBe(file);
  });
});

describe('loadAliasConfig', () => {
  it('indexes chains and re-reads the file when it changes', () => {
    const file = path.join(repo(), 'apps', 'llm-gateway', 'aliases.yaml');
    writeFileSync(file, 'aliases:\n  mana/long-form:\n    chain: [ollama/gemma3:12b]\n');
    expect(loadAliasConfig(file).get('ollama/gemma3:12b')).toEqual({ alias: 'mana/long-form', key: 'LONG_FORM' });
    expect(loadAliasConfig(file)).toBe(loadAliasConfig(file)); // cached

    writeFileSync(file, 'aliases:\n  mana/vision:\n    chain: [ollama/gemma3:12b]\n');
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    expect(loadAliasConfig(file).get('ollama/gemma3:12b')?.key).toBe('VISION');
  });

  it('throws AliasConfigError naming the file when it is missing, not YAML, or has no aliases', () => {
    const dir = repo();
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, 'aliases: [unclosed\n');
    const list = path.join(dir, 'list.yaml');
    writeFileSync(list, '- a\n');
    expect(() => loadAliasConfig(path.join(dir, 'missing.yaml'))).toThrow(AliasConfigError);
    expect(() => loadAliasConfig(path.join(dir, 'missing.yaml'))).toThrow(/missing\.yaml: cannot read the alias config/);
    expect(() => loadAliasConfig(bad)).toThrow(/bad\.yaml: not valid YAML/);
    expect(() => loadAliasConfig(list)).toThrow(/list\.yaml: the alias config has no "aliases" map/);
  });
});
