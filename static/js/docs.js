// /docs: the interactive console (Swagger UI) is loaded only when asked for; the reference
// above it is plain HTML. Scripts come from this site, in order (data-scripts).
(function () {
  "use strict";
  var button = document.getElementById("open-console");
  if (!button) return;
  function load(sources) {
    if (!sources.length) return;
    var script = document.createElement("script");
    script.src = sources[0];
    script.onload = function () { load(sources.slice(1)); };
    document.body.appendChild(script);
  }
  button.addEventListener("click", function () {
    button.disabled = true;
    button.textContent = "Loading the console…";
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = button.getAttribute("data-css");
    document.head.appendChild(css);
    document.getElementById("swagger-ui").hidden = false;
    document.getElementById("reference").hidden = true;
    load(button.getAttribute("data-scripts").split(" "));
    button.textContent = "Console open below";
  });
})();
