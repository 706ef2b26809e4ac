// The API reference, rendered by Scalar's standalone bundle (served from /assets) from our own bundled spec; its
// "try it" server is the instance the page came from (data-server-url).
(function () {
  'use strict';
  var target = document.getElementById('api-docs');
  if (!target || !window.Scalar || typeof window.Scalar.createApiReference !== 'function') return;
  var server = target.getAttribute('data-server-url');
  window.Scalar.createApiReference(target, {
    url: target.getAttribute('data-openapi-url'),
    // "Try it" calls this instance, not the document's example host.
    servers: server ? [{ url: server, description: 'This instance' }] : undefined,
    withDefaultFonts: false,
    hideClientButton: true,
    hideDarkModeToggle: true,
    showDeveloperTools: 'never',
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
  });
})();
