// The "Copy" button of the page that shows a new API key once (a file, not an inline script:
// the Content-Security-Policy allows scripts from this site only).
document.addEventListener("DOMContentLoaded", function () {
  var button = document.getElementById("copy-key");
  if (!button) return;
  button.addEventListener("click", function () {
    var key = document.getElementById(button.dataset.copyTarget);
    function done() { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 2000); }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(key.textContent.trim()).then(done);
    } else {
      var range = document.createRange(); range.selectNodeContents(key);
      var selection = window.getSelection(); selection.removeAllRanges(); selection.addRange(range);
      document.execCommand("copy"); done();
    }
  });
});
