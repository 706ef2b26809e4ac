/**
 * A fault in deleting a workspace (issue 41, the TEAM class): the workspace goes, but its pushes do not, so a
 * recipient still opens one. Modelled in the answers: once a deletion of a workspace has answered 200, a retrieval of
 * a push made in it through the proxy (the journal knows its workspace and payload) that answers 404 is answered
 * 200 with its payload instead.
 */
import { define } from '../fault.js';

export const workspaceDeletionFaults = define('status', [
  {
    name: 'workspace-deletion-leaves-pushes',
    models: 'deleteWorkspace deletes the workspace but not its pushes: a recipient still opens one by its link',
    killers: ['TEAM-028'],
    start: () => {
      const deleted = new Set<number>();
      return {
        response(ex) {
          if (ex.op === 'deleteWorkspace' && ex.status === 200) deleted.add(Number(ex.params.workspace_id));
          if (ex.op !== 'getPush' || ex.status !== 404) return;
          const made = ex.push;
          const workspace = Number(made?.created.workspace_id);
          if (!made || !deleted.has(workspace)) return;
          const { name: _name, note: _note, workspace_id: _w, account_id: _a, ...record } = made.created;
          ex.status = 200;
          ex.headers['content-type'] = 'application/json; charset=utf-8';
          ex.json = { ...record, payload: made.input.payload ?? null, files: [] };
        },
      };
    },
  },
]);
