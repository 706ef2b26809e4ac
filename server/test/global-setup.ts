// Placeholder until the server's test cluster exists: the server issue replaces this with a global set-up that
// starts one throwaway embedded PostgreSQL cluster per run and shares its URL with the test files.
export default async function setup(): Promise<void> {}
