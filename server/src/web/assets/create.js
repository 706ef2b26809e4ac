// Create page: show only the fields that fit the chosen kind (without script every field stays visible).
(function () {
  'use strict';
  var form = document.getElementById('create-form');
  if (!form) return;
  var payloadLabel = document.getElementById('payload-label');
  var payloadHint = document.getElementById('payload-hint');
  var filesField = document.getElementById('files-field');
  var payload = document.getElementById('payload');
  var labels = {
    text: ['Secret text', 'Up to 1,048,576 characters.'],
    url: ['URL', 'An http:// or https:// address; the recipient gets it as a link.'],
    qr: ['Text for the QR code', 'Up to 1,024 characters; the recipient sees it as a QR code.'],
    file: ['Message (optional)', 'Text that goes with the files.'],
  };
  function update() {
    var checked = form.querySelector('input[name="kind"]:checked');
    var kind = checked ? checked.value : 'text';
    var l = labels[kind] || labels.text;
    payloadLabel.textContent = l[0];
    payloadHint.textContent = l[1];
    payload.required = kind !== 'file';
    if (filesField) filesField.hidden = kind !== 'file';
  }
  form.addEventListener('change', function (event) {
    if (event.target && event.target.name === 'kind') update();
  });
  update();
})();
