// The lecture view (book/_ext/companion_book.py puts its button above each page): no sidebars, the page and its
// kernel-free explorer as wide as the window, for a projector. The choice is remembered across pages (localStorage).
"use strict";
(() => {
  const KEY = "companion-lecture-view", CLASS = "companion-lecture";
  const stored = () => { try { return localStorage.getItem(KEY) === "on"; } catch (e) { return false; } };
  const apply = (on) => {
    document.documentElement.classList.toggle(CLASS, on);
    for (const button of document.querySelectorAll(".companion-lecture-toggle")) {
      button.setAttribute("aria-pressed", String(on));
    }
  };
  apply(stored());  // before the page is drawn: no flash of the sidebars when it is on
  document.addEventListener("DOMContentLoaded", () => {
    apply(document.documentElement.classList.contains(CLASS));
    for (const button of document.querySelectorAll(".companion-lecture-toggle")) {
      button.addEventListener("click", () => {
        const on = !document.documentElement.classList.contains(CLASS);
        try { localStorage.setItem(KEY, on ? "on" : "off"); } catch (e) { /* a private window: this page only */ }
        apply(on);
      });
    }
  });
})();
