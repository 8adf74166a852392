"""The science, each idea of the book once: nets, the training engine, spectra, landscapes, neurons, transformers, PDEs, ICL algebra.  Imports kit only."""
