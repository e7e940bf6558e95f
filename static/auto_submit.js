// A form marked data-auto-submit is sent as soon as the page has loaded: the exit page posts a crowd
// worker's completion to the provider this way. Its button stays for a browser without JavaScript.
(function () {
  "use strict";
  document.querySelectorAll("form[data-auto-submit]").forEach(function (form) { form.submit(); });
})();
