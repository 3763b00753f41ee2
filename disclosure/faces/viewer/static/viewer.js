// Citation badges copy "[mem:xxxxxx]" to the clipboard when clicked, then open the memory.
document.addEventListener("click", function (event) {
  var badge = event.target.closest ? event.target.closest("a.cite") : null;
  if (!badge) { return; }
  var text = badge.getAttribute("data-cite");
  if (text && navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).catch(function () { /* copying is a convenience */ });
  }
  badge.classList.add("copied");
});
// Forgetting asks first (the server asks again on its own page when scripts are off).
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) { event.preventDefault(); }
});
