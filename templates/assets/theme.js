// Applies the saved theme before first paint (no inline script, so a strict CSP works).
(function () {
  try {
    var saved = localStorage.getItem("belief-site-theme");
    if (saved === "dark" || saved === "light") document.documentElement.dataset.theme = saved;
  } catch (e) { /* storage may be disabled: follow the system setting */ }
})();
