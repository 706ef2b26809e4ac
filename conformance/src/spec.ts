/**
 * The contract the suite checks against: the bundled OpenAPI document, read through the project's contract toolkit
 * (`@secret-push/contract`, bundled into the packed CLI), so the suite asks the same questions the same way as the
 * server and its tests: each operation by its operationId, and every response the suite sees validated against the
 * schema and headers documented for that operation and status.
 */
import { existsSync, readFileSync } from 'node:fs';
import {
  BUNDLED_SPEC_PATH,
  bundledDocument,
  bundledV1Document,
  Contract as Toolkit,
  type Json,
  type Operation as ToolkitOperation,
  type RouteTable,
  type Violation,
} from '@secret-push/contract';

export type { Violation };

/** The repository's bundled spec (a packed CLI carries the document inside itself and needs no file). */
export const DEFAULT_SPEC_PATH = BUNDLED_SPEC_PATH;

export interface Operation {
  operationId: string;
  method: string;
  path: string;
  responses: Record<string, Json>;
}

export class Contract {
  readonly operations = new Map<string, Operation>();
  private readonly toolkit: Toolkit;

  constructor(readonly document: Json) {
    this.toolkit = new Toolkit(document);
    for (const op of this.toolkit.operations()) {
      this.operations.set(op.operationId, {
        operationId: op.operationId,
        method: op.method.toUpperCase(),
        path: op.path,
        responses: (op.object.responses ?? {}) as Record<string, Json>,
      });
    }
  }

  /** The legacy v1 document (openapi/v1), carried by this package like the v2 one: the V1 requirements check against it. */
  static loadV1(): Contract {
    return new Contract(bundledV1Document());
  }

  /** Which operation a method and path name, by the document's own rules (most literal template first). */
  get routes(): RouteTable<ToolkitOperation> {
    return this.toolkit.routes;
  }

  /** The document at `specPath`, or the bundled one. */
  static load(specPath?: string): Contract {
    if (specPath === undefined || (specPath === DEFAULT_SPEC_PATH && !existsSync(specPath)))
      return new Contract(bundledDocument());
    if (!existsSync(specPath)) throw new Error(`no OpenAPI document at ${specPath}: pass --spec PATH`);
    return new Contract(JSON.parse(readFileSync(specPath, 'utf8')) as Json);
  }

  operation(operationId: string): Operation {
    const op = this.operations.get(operationId);
    if (!op) throw new Error(`the spec has no operation ${operationId}`);
    return op;
  }

  /** A named response of `components.responses` (for answers no operation can list: 404 no_route, 405). */
  hasComponentResponse(name: string): boolean {
    return this.toolkit.componentResponse(name) !== undefined;
  }

  /**
   * Validates one response. `target` is an operationId, or `#Name` for a component response.
   * Returns the violations; an empty list means the response matches the contract.
   */
  validate(target: string, status: number, headers: Headers, rawBody: string): Violation[] {
    return this.toolkit.checkResponse(target, { status, headers, text: rawBody }, { requiredHeaders: false });
  }
}
