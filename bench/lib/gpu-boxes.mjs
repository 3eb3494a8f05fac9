// The saturation scenario's upstreams (the testkit's startGpuBox: a GPU box with a few slots and a
// FIFO queue, and the "cloud", the same fake with slots to spare), in a process of their own so their
// token timers never take turns with the measuring client's event loop. Started by startGpuBoxes() in
// procs.mjs.
//
// Protocol with the parent (IPC): {cmd:'start', id, options} → {started:id, url};
// {cmd:'stats', id} → {statsOf:id, stats}; {cmd:'close', id} → {closed:id}.
import path from 'node:path';
import { repoRoot } from './procs.mjs';

const { startGpuBox } = await import(path.join(repoRoot, 'packages/llm-testkit/dist/index.js'));
const boxes = new Map();

process.on('message', (message) => {
  const { cmd, id } = message ?? {};
  if (cmd === 'start') {
    void startGpuBox(message.options).then((box) => {
      boxes.set(id, box);
      process.send({ started: id, url: box.url });
    });
  } else if (cmd === 'stats') {
    process.send({ statsOf: id, stats: boxes.get(id).stats() });
  } else if (cmd === 'close') {
    const box = boxes.get(id);
    boxes.delete(id);
    void box.close().then(() => process.send({ closed: id }));
  }
});
const closeAll = () => void Promise.all([...boxes.values()].map((box) => box.close())).finally(() => process.exit(0));
process.on('SIGTERM', closeAll);
process.on('disconnect', closeAll);
process.send({ ready: true });
