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

  function element(tag, className, text) {
    var el = document.createElement(tag);
    if (className) el.className = className;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  function statusBadge(status) {
    return element("span", "status status-" + String(status).toLowerCase(), status);
  }

  // Shared with graph.js (loaded after this file on the explorer page).
  window.beliefSite = { element: element, statusBadge: statusBadge };

  // Text with the query's words marked, built as DOM nodes (claims are untrusted text).
  function marked(text, term) {
    var out = document.createDocumentFragment();
    var words = term.split(/\s+/).filter(function (w) { return w.length > 1; })
      .map(function (w) { return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); });
    if (!words.length) {
      out.appendChild(document.createTextNode(text));
      return out;
    }
    text.split(new RegExp("(" + words.join("|") + ")", "gi")).forEach(function (part, i) {
      out.appendChild(i % 2 ? element("mark", "", part) : document.createTextNode(part));
    });
    return out;
  }

  // Pagefind's excerpt marks matches with <mark> and escapes only < and > of the text (checked
  // with Pagefind 1.5): split on the marks, unescape those two, and show the rest as plain text.
  function excerpt(html) {
    var out = document.createDocumentFragment();
    html.split(/<\/?mark>/).forEach(function (part, i) {
      var text = part.replace(/&lt;/g, "<").replace(/&gt;/g, ">");
      out.appendChild(i % 2 ? element("mark", "", text) : document.createTextNode(text));
    });
    return out;
  }

  // Site search (Pagefind over id, claim and summary); the bundle loads on first use.
  function setupSearch() {
    var box = document.querySelector("[data-search]");
    // From disk (file://) browsers refuse to load the index: no box that cannot answer.
    if (!box || location.protocol === "file:") return null;
    var input = box.querySelector("[data-search-input]");
    var panel = box.querySelector("[data-search-panel]");
    var list = box.querySelector("[data-search-results]");
    var count = box.querySelector("[data-search-count]");
    var status = box.querySelector("[data-search-status]");
    var kind = box.querySelector("[data-search-kind]");
    var bundle = new URL(box.dataset.search, document.baseURI).href;
    var engine = null, serial = 0, timer = null;
    box.hidden = false;

    function load() {
      if (!engine) {
        engine = import(bundle).then(function (pagefind) {
          return Promise.resolve(pagefind.options({ excerptLength: 24 })).then(function () { return pagefind; });
        });
        engine.catch(function () { engine = null; });
      }
      return engine;
    }

    // The panel hangs below the box, kept inside the viewport whether the box sits at the
    // right of the header (wide screens) or on a line of its own (phones).
    function place() {
      var page = document.documentElement.clientWidth;
      var width = Math.min(544, page - 32);
      var at = box.getBoundingClientRect();
      var left = Math.max(16, Math.min(at.right - width, page - 16 - width));
      panel.style.width = width + "px";
      panel.style.left = (left - at.left) + "px";
    }

    function open() {
      panel.hidden = false;
      input.setAttribute("aria-expanded", "true");
      place();
    }

    function close() {
      panel.hidden = true;
      input.setAttribute("aria-expanded", "false");
    }

    function show(term, total, items) {
      list.textContent = "";
      var filtered = status.value || kind.value;
      count.textContent = total === 0 ? "No belief matches \u201c" + term + "\u201d" + (filtered ? " with these filters." : ".")
        : total + (total === 1 ? " belief matches" : " beliefs match") + (total > items.length ? "; the first " + items.length + " are listed." : ".");
      items.forEach(function (data) {
        var meta = data.meta || {};
        var link = element("a", "search-result");
        link.href = data.url;
        var head = element("span", "search-result-head");
        head.appendChild(statusBadge(meta.status || "?"));
        head.appendChild(document.createTextNode(" "));
        head.appendChild(element("code", "", meta.title || data.url));
        if (meta.kind) {
          head.appendChild(document.createTextNode(" "));
          head.appendChild(element("span", "kind", meta.kind));
        }
        link.appendChild(head);
        var claim = element("span", "search-claim");
        claim.appendChild(marked(meta.claim || "", term));
        link.appendChild(claim);
        if (!claim.querySelector("mark") && data.excerpt) {
          var more = element("span", "search-excerpt");
          more.appendChild(document.createTextNode("\u2026 "));
          more.appendChild(excerpt(data.excerpt));
          more.appendChild(document.createTextNode(" \u2026"));
          link.appendChild(more);
        }
        var item = element("li");
        item.appendChild(link);
        list.appendChild(item);
      });
    }

    function run() {
      var term = input.value.trim();
      var mine = ++serial;
      if (!term) {
        list.textContent = "";
        count.textContent = "";
        close();
        return;
      }
      open();
      load().then(function (pagefind) {
        var filters = {};
        if (status.value) filters.status = status.value;
        if (kind.value) filters.kind = kind.value;
        return pagefind.search(term, { filters: filters }).then(function (found) {
          if (mine !== serial || !found) return null;
          return Promise.all(found.results.slice(0, 20).map(function (r) { return r.data(); })).then(function (items) {
            if (mine === serial) show(term, found.results.length, items);
          });
        });
      }).catch(function () {
        if (mine !== serial) return;
        list.textContent = "";
        count.textContent = location.protocol === "file:"
          ? "Search needs the site to be served (browsers do not let pages load it from disk)."
          : "Search is unavailable: its index could not be loaded.";
      });
    }

    function later() {
      clearTimeout(timer);
      timer = setTimeout(run, 120);
    }

    var quiet = false;  // set while Escape hands focus back: that focus must not search again
    input.addEventListener("focus", function () { load(); if (!quiet && input.value.trim()) run(); });
    window.addEventListener("resize", function () { if (!panel.hidden) place(); });
    input.addEventListener("input", later);
    status.addEventListener("change", run);
    kind.addEventListener("change", run);
    box.addEventListener("keydown", function (e) {
      var links = Array.prototype.slice.call(list.querySelectorAll("a"));
      var at = links.indexOf(document.activeElement);
      if (e.key === "Enter" && document.activeElement === input) {
        if (links.length) links[0].click();
      } else if (e.key === "Escape") {  // closes the panel; on a closed one, leaves the box
        var wasOpen = !panel.hidden;
        clearTimeout(timer);
        serial++;  // a search still on its way shows nothing
        close();
        if (!wasOpen) {
          input.blur();
        } else if (document.activeElement !== input) {
          quiet = true;
          input.focus();
          quiet = false;
        }
      } else if (e.key === "ArrowDown" && links.length && (document.activeElement === input || at >= 0)) {
        links[Math.min(at + 1, links.length - 1)].focus();
      } else if (e.key === "ArrowUp" && at >= 0) {
        (at > 0 ? links[at - 1] : input).focus();
      } else {
        return;
      }
      e.preventDefault();
    });
    box.addEventListener("focusout", function (e) {
      if (!e.relatedTarget || !box.contains(e.relatedTarget)) close();
    });
    return input;
  }

  // "/" focuses the search box, unless the reader is typing somewhere.
  function setupShortcut(input) {
    if (!input) return;
    document.addEventListener("keydown", function (e) {
      if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
      var target = e.target;
      if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
      e.preventDefault();
      input.focus();
      input.select();
    });
  }

  // Hover or focus a link to a belief: its status and claim, in a tooltip (Escape dismisses).
  function setupPreviews() {
    var tip = element("div", "hover-preview");
    tip.id = "belief-preview";
    tip.setAttribute("role", "tooltip");
    tip.hidden = true;
    document.body.appendChild(tip);
    var current = null, timer = null;

    function place(link) {
      var box = link.getBoundingClientRect();
      var width = tip.offsetWidth, page = document.documentElement.clientWidth;
      var left = Math.max(8, Math.min(box.left, page - width - 8));
      tip.style.left = (left + window.scrollX) + "px";
      tip.style.top = (box.bottom + window.scrollY + 6) + "px";
    }

    function show(link) {
      clearTimeout(timer);
      if (current === link) return;
      hide();
      var claim = link.getAttribute("data-claim");
      if (!claim) return;
      current = link;
      tip.textContent = "";
      var head = element("p", "hover-preview-head");
      if (link.dataset.status) {
        head.appendChild(statusBadge(link.dataset.status));
        head.appendChild(document.createTextNode(" "));
      }
      head.appendChild(element("code", "", link.textContent.trim()));
      tip.appendChild(head);
      tip.appendChild(element("p", "", claim));
      tip.hidden = false;
      link.setAttribute("aria-describedby", tip.id);
      place(link);
    }

    function hide() {
      clearTimeout(timer);
      if (current) current.removeAttribute("aria-describedby");
      current = null;
      tip.hidden = true;
    }

    function linkOf(node) {
      return node && node.closest ? node.closest("a[data-claim]") : null;
    }

    document.addEventListener("mouseover", function (e) {
      var link = linkOf(e.target);
      if (link) {
        clearTimeout(timer);
        timer = setTimeout(function () { show(link); }, 250);
      } else if (current && !tip.contains(e.target)) {
        clearTimeout(timer);
        timer = setTimeout(hide, 150);
      } else if (tip.contains(e.target)) {
        clearTimeout(timer);  // the tooltip itself can be hovered (WCAG 1.4.13)
      }
    });
    document.addEventListener("focusin", function (e) {
      var link = linkOf(e.target);
      if (link) show(link);
      else hide();
    });
    document.addEventListener("focusout", function (e) {
      if (linkOf(e.target) === current) hide();
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && current) hide();
    });
    window.addEventListener("resize", hide);
  }

  // The index's sorting and filters, once per table. In MkDocs Material, instant navigation
  // swaps pages in without a load event and announces each one (the first too) on document$.
  function setupTables() {
    Array.prototype.forEach.call(document.querySelectorAll("table[data-sortable]"), function (table) {
      if (table.dataset.ready) return;
      table.dataset.ready = "true";
      setupSorting(table);
      setupFilters(table);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    setupThemeToggle();
    setupShortcut(setupSearch());
    setupPreviews();
    setupTables();
    if (window.document$ && typeof window.document$.subscribe === "function") {
      window.document$.subscribe(setupTables);
    }
  });
})();
