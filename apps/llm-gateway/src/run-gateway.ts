/**
 * The gateway process, once `main.ts` has its signal handlers in place:
 * options → start → signals. SIGHUP reloads the config (ignored, with a log
 * line, until the config is loaded); SIGTERM/SIGINT drain and exit 0 (a second
 * one exits at once).
 */
import { parseCli } from './cli.js';
import { startGateway, type Gateway } from './gateway.js';
import { createLogger } from './logging.js';

/** Signals caught by the entry point before this module loaded, and from then on. */
export interface HeldSignals {
  /** From now on signals go to `handler`; any that arrived earlier are handed over first, in order. */
  deliverTo(handler: (signal: NodeJS.Signals) => void): void;
}

export async function runGateway(signals: HeldSignals): Promise<void> {
  const cli = parseCli(process.argv.slice(2), process.env);
  if (cli.kind === 'help') {
    process.stdout.write(cli.text);
    return;
  }
  if (cli.kind === 'error') {
    process.stderr.write(`mana-llm-gateway: ${cli.message}\n`);
    process.exitCode = 2;
    return;
  }
  const options = cli.options;
  const { logger, flush } = createLogger(options.logLevel);

  process.on('unhandledRejection', (reason) => {
    logger.error({ err: { message: (reason as Error)?.message ?? String(reason) } }, 'unhandled rejection');
  });
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: { name: error.name, message: error.message, stack: error.stack } }, 'uncaught exception');
    void flush(500).then(() => process.exit(1));
  });

  let gateway: Gateway | undefined;
  let stopping = false;

  const reload = (): void => {
    if (gateway === undefined) logger.warn('SIGHUP during startup: ignored (the config being loaded is read now)');
    else void gateway.reload('signal');
  };

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      void flush(200).then(() => process.exit(1));
      return;
    }
    stopping = true;
    if (gateway === undefined) {
      logger.info({ signal }, 'signal during startup: exiting');
      void flush().then(() => process.exit(0));
      return;
    }
    logger.info({ signal, grace_ms: options.shutdownGraceMs }, 'shutting down: draining in-flight requests');
    gateway.shutdown().then(
      async (result) => {
        logger.info({ drained: result.drained, duration_ms: Math.round(result.durationMs) }, 'stopped');
        await flush();
        process.exit(0);
      },
      async (error: unknown) => {
        logger.error({ err: { message: (error as Error)?.message } }, 'shutdown failed');
        await flush();
        process.exit(1);
      },
    );
  };
  signals.deliverTo((signal) => (signal === 'SIGHUP' ? reload() : stop(signal)));

  try {
    gateway = await startGateway(options, { logger });
  } catch (error) {
    logger.fatal({ err: { message: (error as Error).message } }, 'cannot start');
    await flush();
    process.stderr.write(`mana-llm-gateway: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

