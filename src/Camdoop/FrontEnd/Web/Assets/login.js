// A link of the form http://HOST:PORT/#token=... (as `camdoop web` prints) logs in at once. The token travels in
// the fragment, which the browser never sends, and is posted to /login only; the fragment is cleared at once.
"use strict";
(function () {
  const match = /^#token=([0-9a-fA-F]{64})$/.exec(window.location.hash);
  if (!match) {
    return;
  }
  history.replaceState(null, "", window.location.pathname);
  document.getElementById("token").value = match[1];
  document.getElementById("login").submit();
})();
