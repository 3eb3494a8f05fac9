/**
 * A refusal of an admin request (4xx with a stable code), thrown from the
 * admin modules and turned into the response by the route.
 */
import { gatewayError, type GatewayError, type GatewayErrorCode } from '../http/errors.js';

export class AdminFailure extends Error {
  override readonly name = 'AdminFailure';
  readonly error: GatewayError;
  constructor(code: GatewayErrorCode, message: string, extra: Partial<GatewayError> = {}) {
    super(message);
    this.error = gatewayError(code, message, extra);
  }
}

export function isAdminFailure(error: unknown): error is AdminFailure {
  return error instanceof AdminFailure;
}
