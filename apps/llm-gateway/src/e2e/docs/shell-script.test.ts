import { describe, expect, it } from 'vitest';
import { literal, parseScript, ShellSyntaxError, type Word } from './shell-script.js';

const words = (script: string): (string | undefined)[][] => parseScript(script).map((c) => c.stages[0]!.map(literal));
const parts = (word: Word) => word.map((p) => (p.kind === 'text' ? p.text : p.kind === 'var' ? `<${p.name}>` : `<$(${p.script})>`)).join('');

describe('the shell of the docs examples', () => {
  it('reads quotes, escapes and line continuations as bash does', () => {
    expect(words(`curl -s 'a b' "c d" e\\ f \\\n  -d '{"x": 1}'`)).toEqual([['curl', '-s', 'a b', 'c d', 'e f', '-d', '{"x": 1}']]);
    expect(words(`curl -d '{\n  "multi": "line"\n}'`)).toEqual([['curl', '-d', '{\n  "multi": "line"\n}']]);
    expect(words(`curl -d "{\\"id\\": \\"x\\"}"`)).toEqual([['curl', '-d', '{"id": "x"}']]);
  });

  it('keeps variables and $(…) for later, and none inside single quotes', () => {
    const [command] = parseScript(`curl -H "If-Match: \\"$VERSION\\"" $GW/a/\${ID}/b '$NOT' V=$(curl -s x | jq -r .version)`);
    expect(command!.stages[0]!.map(parts)).toEqual(['curl', '-H', 'If-Match: "<VERSION>"', '<GW>/a/<ID>/b', '$NOT', 'V=<$(curl -s x | jq -r .version)>']);
  });

  it('gives a command the comments right under it (and on its line), not those after a blank line', () => {
    const commands = parseScript(['A=1; B=2', '', 'curl x   # on its line', '# → {"a": 1}', '#    "b": 2}', '', '# about the next one', 'curl y'].join('\n'));
    expect(commands.map((c) => [c.line, c.comments])).toEqual([
      [1, []],
      [1, []],
      [3, [' on its line', ' → {"a": 1}', '    "b": 2}']],
      [8, []],
    ]);
  });

  it('refuses what a docs example must not rely on', () => {
    expect(() => parseScript('curl x > out.json')).toThrow(ShellSyntaxError);
    expect(() => parseScript('curl x && curl y')).toThrow(ShellSyntaxError);
    expect(() => parseScript("curl 'unclosed")).toThrow(ShellSyntaxError);
  });
});
