// Kernel-free explorers (companion/tools/precompute.py): each control picks one of the precomputed
// values, and the picture of that grid point replaces the shown one. No kernel, no network.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const root of document.querySelectorAll(".companion-explorer")) {
    const grid = JSON.parse(root.querySelector("script[type='application/json']").textContent);
    const files = new Map(grid.points.map((p) => [p.key, p.file]));
    const image = root.querySelector("img");
    const inputs = [...root.querySelectorAll("[data-control]")];
    const show = () => {
      const key = inputs.map((input) => input.value).join(",");
      const labels = inputs.map((input) => {
        const value = grid.controls[input.dataset.control].values[Number(input.value)];
        const readout = root.querySelector(`output[data-for="${input.dataset.control}"]`);
        if (readout) readout.textContent = String(value);
        return `${grid.controls[input.dataset.control].label} = ${value}`;
      });
      image.src = `${root.dataset.base}/${files.get(key)}`;
      image.alt = `${grid.title}: ${labels.join(", ")}`;
      root.dataset.point = key;
    };
    for (const input of inputs) input.addEventListener("input", show);
    show();
  }
});
