// Click-to-enlarge for the pages' figures: a click (or Enter) on a figure of a notebook's output, or on an explorer's
// picture, shows it over the page at up to the window's size, so that a multi-panel figure squeezed into the text
// column can be read on a laptop or a projector.  A click anywhere, or Escape, closes it.  No network, no library.
(function () {
    "use strict";
    const zh = (document.documentElement.lang || "").startsWith("zh");
    const HINT = zh ? "点击放大" : "Click to enlarge";
    const CLOSE = zh ? "点击任意处或按 Esc 关闭" : "Click anywhere or press Esc to close";
    const SELECTOR = ".bd-article .cell_output img, .bd-article .output img, .bd-article img.companion-explorer-figure";

    let overlay = null;

    function close() {
        if (overlay) {
            overlay.remove();
            overlay = null;
        }
    }

    function open(img) {
        close();
        overlay = document.createElement("div");
        overlay.className = "companion-enlarged";
        overlay.setAttribute("role", "dialog");
        overlay.setAttribute("aria-label", img.alt || HINT);
        overlay.title = CLOSE;
        const big = document.createElement("img");
        big.src = img.currentSrc || img.src;   // an explorer's picture: the one shown now
        big.alt = img.alt;
        overlay.appendChild(big);
        overlay.addEventListener("click", close);
        document.body.appendChild(overlay);
    }

    function enlargeable(target) {
        return target instanceof HTMLImageElement && target.matches(SELECTOR);
    }

    document.addEventListener("click", function (event) {
        if (enlargeable(event.target)) {
            event.preventDefault();
            open(event.target);
        }
    });
    document.addEventListener("keydown", function (event) {
        if (event.key === "Escape") {
            close();
        } else if (event.key === "Enter" && enlargeable(document.activeElement)) {
            open(document.activeElement);
        }
    });
    function mark() {
        document.querySelectorAll(SELECTOR).forEach(function (img) {
            img.classList.add("companion-enlargeable");
            img.title = HINT;
            img.tabIndex = 0;
        });
    }
    if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", mark);
    } else {
        mark();
    }
})();
