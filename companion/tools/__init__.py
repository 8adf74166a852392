"""The catalog, the headless runner, the robustness sweep, the site and the command line.  May import anything."""
