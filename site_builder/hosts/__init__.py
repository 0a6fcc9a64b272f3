"""Adapters that run the core inside other tools (the MkDocs plugin)."""
