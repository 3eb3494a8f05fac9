/**
 * A small time-series chart (uPlot: ~45 KB minified, canvas, no
 * dependencies). The numbers are also in a visually hidden table, so a screen
 * reader gets them as text.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  readonly label: string;
  readonly values: readonly number[];
}

const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

export function TimeChart({ title, times, series }: { title: string; times: readonly number[]; series: readonly Series[] }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (element === null) return;
    const width = Math.max(260, element.clientWidth);
    const plot = new uPlot(
      {
        width,
        height: 180,
        legend: { show: series.length > 0 },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { size: 40 }],
        series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length], width: 2, points: { show: false } }))],
      },
      [times.map((t) => t / 1000), ...series.map((s) => [...s.values])],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(260, element.clientWidth), height: 180 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series]);

  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={holder} aria-hidden="true" />
      {/* A table ignores the 1px width of .visually-hidden: the wrapper clips it. */}
      <div class="visually-hidden">
      <table>
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">time</th>
            {series.map((s) => (
              <th scope="col" key={s.label}>
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {times.map((t, i) => (
            <tr key={t}>
              <td>{new Date(t).toISOString()}</td>
              {series.map((s) => (
                <td key={s.label}>{s.values[i]}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
    </figure>
  );
}
