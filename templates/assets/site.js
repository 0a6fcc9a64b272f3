// Progressive enhancement only: every page is complete without JavaScript.
(function () {
  "use strict";

  function setupThemeToggle() {
    var button = document.querySelector("[data-theme-toggle]");
    if (!button) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var root = document.documentElement;
      var dark = root.dataset.theme ? root.dataset.theme === "dark"
        : window.matchMedia("(prefers-color-scheme: dark)").matches;
      root.dataset.theme = dark ? "light" : "dark";
      try { localStorage.setItem("belief-site-theme", root.dataset.theme); } catch (e) { /* ignore */ }
    });
  }

  function cellValue(row, index, numeric) {
    var text = row.cells[index].textContent.trim();
    return numeric ? parseFloat(text) || 0 : text.toLowerCase();
  }

  function setupSorting(table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (th, index) {
      th.tabIndex = 0;
      th.setAttribute("aria-sort", "none");
      var numeric = th.dataset.type === "number";
      function sort() {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headers, function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
          return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
        });
        rows.forEach(function (row) { body.appendChild(row); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  }

  function setupFilters(table) {
    var box = document.querySelector("[data-filters]");
    if (!box) return;
    box.hidden = false;
    var text = box.querySelector("[data-filter-text]");
    var status = box.querySelector("[data-filter-status]");
    var kind = box.querySelector("[data-filter-kind]");
    function apply() {
      var needle = text.value.trim().toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var show = (!status.value || row.dataset.status === status.value)
          && (!kind.value || row.dataset.kind === kind.value)
          && (!needle || row.textContent.toLowerCase().indexOf(needle) !== -1);
        row.hidden = !show;
      });
    }
    [text, status, kind].forEach(function (el) { el.addEventListener("input", apply); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    setupThemeToggle();
    Array.prototype.forEach.call(document.querySelectorAll("table[data-sortable]"), function (table) {
      setupSorting(table);
      setupFilters(table);
    });
  });
})();
