// The bench scripts' command line: `--name=value` options and `--name` flags.
const argv = process.argv.slice(2);

/** The value of `--name=value`, or `fallback` when it is not given. */
export const option = (name, fallback) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;

/** Whether `--name` is given. */
export const flag = (name) => argv.includes(`--${name}`);
