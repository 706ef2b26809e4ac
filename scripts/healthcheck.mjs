// The image's HEALTHCHECK (Dockerfile): exit 0 when the server's readiness probe answers 200, else 1. It asks the
// address the server listens on (PORT, PWPUSH_HOST; every interface is asked on loopback), within 4 seconds.
const port = process.env.PORT || '5100';
const bound = process.env.PWPUSH_HOST || '0.0.0.0';
const host = bound === '0.0.0.0' ? '127.0.0.1' : bound === '::' ? '[::1]' : bound.includes(':') ? `[${bound}]` : bound;
try {
  const res = await fetch(`http://${host}:${port}/readyz`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
