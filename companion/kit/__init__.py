"""The lab equipment: settings, claims, cache, plots, widgets, exercise feedback.  Imports no other part of the package."""
