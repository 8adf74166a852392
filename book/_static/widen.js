// Wide figures: a notebook's figure or an explorer's picture drawn wider than the text column is given the column and
// the page's right margin (over the "on this page" sidebar), up to its own width, so that a multi-panel figure's text
// stays legible (≥ 9 px at a 1280 px window; tests/test_browser_explorers.py measures it).  Its own width is its
// width attribute (an explorer's picture drawn at 2× density) or its pixel width.  Laid out again whenever its column
// changes width (window resized, the lecture view toggled).
(function () {
    "use strict";
    const SELECTOR = ".bd-article .cell_output img, .bd-article img.companion-explorer-figure";
    const GAP = 8;  // px kept free at the window's right edge

    function widen(img) {
        img.classList.remove("companion-wide");
        img.style.removeProperty("width");
        const own = Number(img.getAttribute("width")) || img.naturalWidth;
        const column = img.parentElement.getBoundingClientRect();
        const room = document.documentElement.clientWidth - GAP - column.left;
        if (!own || own <= column.width || room <= column.width) return;
        img.classList.add("companion-wide");
        img.style.width = `${Math.min(own, room)}px`;
    }

    function start() {
        const images = [...document.querySelectorAll(SELECTOR)];
        const observer = new ResizeObserver(() => images.forEach(widen));
        for (const img of images) {
            if (!img.complete) img.addEventListener("load", () => widen(img));
            observer.observe(img.parentElement);
            widen(img);
        }
    }

    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
})();
