"""belief-site: a static-site generator for truth-maintenance belief networks."""

__version__ = "0.1.0"
