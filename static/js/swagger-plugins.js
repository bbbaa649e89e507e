// /docs console: Swagger UI without the HEAD and OPTIONS operations in its listing (the page
// describes them once). Loaded after swagger-ui-bundle.js and before drf-spectacular's start-up
// script, it wraps SwaggerUIBundle so every UI it builds gets this plugin.
(function () {
  "use strict";
  var hidden = ["head", "options"];
  function HideHeadAndOptions() {
    return {
      statePlugins: {
        spec: {
          wrapSelectors: {
            taggedOperations: function (original) {
              return function () {
                return original.apply(null, arguments).map(function (tag) {
                  return tag.update("operations", function (operations) {
                    return operations.filter(function (op) {
                      return hidden.indexOf(op.get("method")) === -1;
                    });
                  });
                });
              };
            },
          },
        },
      },
    };
  }
  // The servers <select> has a visible title but no label of its own (axe: select-name).
  new MutationObserver(function () {
    var servers = document.getElementById("servers");
    if (servers && !servers.hasAttribute("aria-label")) servers.setAttribute("aria-label", "Server");
  }).observe(document.documentElement, { childList: true, subtree: true });
  var bundle = window.SwaggerUIBundle;
  if (!bundle) return;
  function withPlugin(config) {
    config.plugins = (config.plugins || []).concat([HideHeadAndOptions]);
    return bundle(config);
  }
  Object.keys(bundle).forEach(function (key) { withPlugin[key] = bundle[key]; });
  window.SwaggerUIBundle = withPlugin;
})();
