/**
 * Data that refreshes by itself: loads at once, then every `intervalMs` while
 * the tab is visible (a hidden tab polls nothing and catches up when shown).
 * A slow answer is never overlapped by the next poll.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export interface Polled<T> {
  readonly data?: T;
  readonly error?: ApiError;
  /** When the shown data was loaded (ms since epoch). */
  readonly loadedAt?: number;
  readonly loading: boolean;
  refresh(): void;
}

export function usePoll<T>(load: (signal: AbortSignal) => Promise<T>, intervalMs: number | null, deps: readonly unknown[]): Polled<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loadedAt?: number; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let waiting = false; // a poll skipped while hidden, to run when the tab shows again
    const run = async (): Promise<void> => {
      timer = undefined;
      if (document.hidden && intervalMs !== null) {
        waiting = true; // resumed by visibilitychange
        return;
      }
      setState((s) => ({ ...s, loading: true }));
      try {
        const data = await loadRef.current(controller.signal);
        if (!controller.signal.aborted) setState({ data, error: undefined, loadedAt: Date.now(), loading: false });
      } catch (error) {
        if (controller.signal.aborted) return;
        const e = error instanceof ApiError ? error : new ApiError(0, 'error', (error as Error).message);
        setState((s) => ({ ...s, error: e, loading: false }));
      }
      if (intervalMs !== null && !controller.signal.aborted) timer = setTimeout(() => void run(), intervalMs);
    };
    const onVisible = (): void => {
      // Only a poll that was skipped resumes: a one-shot load (intervalMs null) never runs again
      // by itself, or a form built from it would lose what the user typed.
      if (!document.hidden && waiting) {
        waiting = false;
        void run();
      }
    };
    void run();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [...deps, intervalMs, tick]);

  const refresh = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, refresh };
}
