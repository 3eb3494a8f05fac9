// The OTLP/HTTP receiver of the tracing rows (the testkit's, decoding every
// export and keeping only a count) in a process of its own, so decoding the
// spans never takes turns with the measuring client on its event loop.
// Started by startCollector() in procs.mjs; answers `count` with the spans received.
import path from 'node:path';
import { repoRoot } from './procs.mjs';

const { startOtlpReceiver } = await import(path.join(repoRoot, 'packages/llm-testkit/dist/index.js'));
const receiver = await startOtlpReceiver({ record: false });
process.on('message', (message) => {
  if (message?.cmd === 'count') process.send({ count: receiver.spanCount() });
});
process.on('SIGTERM', () => {
  void receiver.close().finally(() => process.exit(0));
});
process.send({ ready: true, url: receiver.url });
