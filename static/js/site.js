// Progressive enhancement only: every page works without this file.
(function () {
  "use strict";

  // Code tabs: <div class="tabs"> holding <section class="tab-panel" data-tab="Label">.
  document.querySelectorAll(".tabs").forEach(function (box, boxIndex) {
    var panels = Array.prototype.slice.call(box.querySelectorAll(".tab-panel"));
    if (!panels.length) return;
    var list = document.createElement("div");
    list.setAttribute("role", "tablist");
    list.setAttribute("aria-label", box.getAttribute("data-label") || "Examples");
    var tabs = panels.map(function (panel, index) {
      var tab = document.createElement("button");
      tab.type = "button";
      tab.id = "tab-" + boxIndex + "-" + index;
      tab.textContent = panel.getAttribute("data-tab");
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-controls", panel.id);
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      list.appendChild(tab);
      return tab;
    });
    function select(chosen) {
      tabs.forEach(function (tab, index) {
        var on = index === chosen;
        tab.setAttribute("aria-selected", on ? "true" : "false");
        tab.tabIndex = on ? 0 : -1;
        panels[index].hidden = !on;
      });
    }
    tabs.forEach(function (tab, index) {
      tab.addEventListener("click", function () { select(index); });
      tab.addEventListener("keydown", function (event) {
        var step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
        if (!step) return;
        var next = (index + step + tabs.length) % tabs.length;
        select(next);
        tabs[next].focus();
      });
    });
    box.insertBefore(list, panels[0]);
    box.classList.add("ready");
    select(0);
  });

  // "Copy" buttons: data-copy-target names the element whose text is copied.
  document.querySelectorAll("[data-copy-target]").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy-target"));
      var label = button.textContent;
      function done() {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = label; }, 2000);
      }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(source.textContent.trim()).then(done);
      } else {
        var range = document.createRange();
        range.selectNodeContents(source);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        document.execCommand("copy");
        done();
      }
    });
  });
})();
