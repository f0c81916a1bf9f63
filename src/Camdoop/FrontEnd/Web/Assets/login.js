// The login form takes the code that `camdoop web` prints, or the whole link it prints (.../login?code=...): the
// code is taken out of a pasted link before the form is posted.
"use strict";
(function () {
  const form = document.getElementById("login");
  const input = document.getElementById("code");
  input.focus();
  form.addEventListener("submit", () => {
    const match = /[?&]code=([0-9a-fA-F]{64})/.exec(input.value);
    input.value = match ? match[1] : input.value.trim();
  });
})();
