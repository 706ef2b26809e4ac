/**
 * A page of a workspace's live push or request carries the workspace's brand (issue 42): its route calls this once it
 * knows the workspace, and the layout renders `v.viewer.brand`. No workspace, or a workspace without a brand: the
 * instance's, as before. An expired or unknown link never gets here (a dead link names no workspace).
 */
import type { PageKit, Visit } from './page-kit.js';

export async function workspaceBrand(kit: PageKit, v: Visit, workspaceId: number | null): Promise<void> {
  if (workspaceId === null) return;
  const brand = await kit.brands.forWorkspace(workspaceId);
  if (brand) v.viewer.brand = brand;
}
