/**
 * The ids of one response, decided once and used identically in every stream
 * event and in the final object (peers' stream events named other ids than
 * their `response.completed`, and clients that matched them broke):
 *
 *   resp_<r>            the response
 *   msg_<r>_<n>         a message item at output index n
 *   fc_<r>_<n>          a function_call item at output index n
 *   call_<r>_<n>        its `call_id`, when the upstream gave its tool call no id;
 *                       otherwise the upstream's id itself, so the function_call_output
 *                       a client sends back answers the call the model knows
 *
 * `<r>` is 32 random hex digits per response: unique across replicas and
 * restarts, since a client keeps these ids in its history.
 */
import { randomUUID } from 'node:crypto';

export class ResponseIds {
  private readonly r = randomUUID().replaceAll('-', '');
  readonly response = `resp_${this.r}`;

  message(outputIndex: number): string {
    return `msg_${this.r}_${outputIndex}`;
  }

  functionCall(outputIndex: number): string {
    return `fc_${this.r}_${outputIndex}`;
  }

  /** The call_id of a function_call: the upstream's tool-call id when it gave one. */
  callId(upstreamId: unknown, outputIndex: number): string {
    return typeof upstreamId === 'string' && upstreamId !== '' ? upstreamId : `call_${this.r}_${outputIndex}`;
  }
}
