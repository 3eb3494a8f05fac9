#!/usr/bin/env node
/**
 * The gateway process: options → start → signals.
 * SIGHUP reloads the config; SIGTERM/SIGINT drain and exit 0 (a second one exits at once).
 */
import { parseCli } from './cli.js';
import { startGateway } from './gateway.js';
import { createLogger } from './logging.js';

async function main(): Promise<void> {
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
    flush();
    process.exit(1);
  });

  let gateway;
  try {
    gateway = await startGateway(options, { logger });
  } catch (error) {
    logger.fatal({ err: { message: (error as Error).message } }, 'cannot start');
    flush();
    process.stderr.write(`mana-llm-gateway: ${(error as Error).message}\n`);
    process.exit(1);
  }
  const gw = gateway;

  process.on('SIGHUP', () => {
    void gw.reload('signal');
  });

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      flush();
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, grace_ms: options.shutdownGraceMs }, 'shutting down: draining in-flight requests');
    void gw.shutdown().then(
      (result) => {
        logger.info({ drained: result.drained, duration_ms: Math.round(result.durationMs) }, 'stopped');
        flush();
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: { message: (error as Error)?.message } }, 'shutdown failed');
        flush();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
