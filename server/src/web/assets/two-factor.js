// The enrolment page of two-factor sign-in: draws the otpauth:// URI of data-otpauth as a QR code (the QR library
// is served from this server). The key is also printed on the page, for typing into an app without a camera.
(function () {
  'use strict';
  var holder = document.getElementById('otpauth-qr');
  var uri = holder && holder.getAttribute('data-otpauth');
  if (!holder || !uri || !window.QRCode) return;
  window.QRCode.toString(uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' }).then(
    function (svgText) {
      var doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
      var svg = doc.documentElement;
      if (svg && svg.nodeName.toLowerCase() === 'svg') holder.appendChild(document.importNode(svg, true));
    },
    function () {
      holder.textContent = window.SecretPush.t('js.twoFactor.qrFailed');
    },
  );
})();
