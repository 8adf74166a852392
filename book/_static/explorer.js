// Kernel-free explorers (companion/tools/precompute.py): each control picks one of the precomputed
// values, and the picture of that grid point replaces the shown one. No kernel, no network.
// A slider's position p stands for the grid's value data-order[p] when the grid lists its values out of order.
// A control with data-applies (another control's indices at which it changes the picture) is disabled elsewhere.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const root of document.querySelectorAll(".companion-explorer")) {
    const grid = JSON.parse(root.querySelector("script[type='application/json']").textContent);
    const files = new Map(grid.points.map((p) => [p.key, p.file]));
    const image = root.querySelector("img");
    const inputs = [...root.querySelectorAll("[data-control]")];
    const index = new Map();
    const show = () => {
      for (const input of inputs) {
        const order = input.dataset.order ? JSON.parse(input.dataset.order) : null;
        index.set(input.dataset.control, order ? order[Number(input.value)] : Number(input.value));
      }
      for (const input of inputs) {
        if (!input.dataset.applies) continue;
        const applies = Object.entries(JSON.parse(input.dataset.applies))
          .every(([other, allowed]) => allowed.includes(index.get(other)));
        input.disabled = !applies;
        input.closest("label").classList.toggle("companion-explorer-inert", !applies);
      }
      const key = inputs.map((input) => index.get(input.dataset.control)).join(",");
      const labels = inputs.map((input) => {
        const value = grid.controls[input.dataset.control].values[index.get(input.dataset.control)];
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
