/** The check of the API's answers against the contract (ApiEdgeOptions.validateResponses): logged, never exposed. */
import type { Logger } from 'pino';
import type { Contract } from '@secret-push/contract';
import type { RequestState } from './middleware.js';

/** Checks one JSON answer of a routed operation against the contract (`status`, the body as sent). */
export type AnswerCheck = (s: RequestState, status: number, body: unknown) => void;

/** The check of answers against the contract; mismatches are logged (never exposed). */
export function answerChecker(logger: Logger, against: Contract): AnswerCheck {
  return (s, status, body) => {
    const operationId = s.operationId;
    if (!operationId) return;
    const violations = against.checkResponse(
      operationId,
      { status, headers: { 'content-type': 'application/json' }, body },
      { requiredHeaders: false },
    );
    if (violations.length > 0) {
      logger.error(
        {
          request_id: s.requestId,
          operation: operationId,
          status,
          violations: violations.map((v) => `${v.path} ${v.message}`),
        },
        'response does not match the contract',
      );
    }
  };
}
