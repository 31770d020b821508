"""Watching production: stored conversations scored as they finish (`adk-eval watch`)."""
