// The API reference, rendered by Scalar's standalone bundle (served from /assets) from our own bundled spec.
(function () {
  'use strict';
  var target = document.getElementById('api-docs');
  if (!target || !window.Scalar || typeof window.Scalar.createApiReference !== 'function') return;
  window.Scalar.createApiReference(target, {
    url: target.getAttribute('data-openapi-url'),
    withDefaultFonts: false,
    hideClientButton: true,
    hideDarkModeToggle: true,
    showDeveloperTools: 'never',
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
  });
})();
