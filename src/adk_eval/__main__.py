"""``python -m adk_eval`` is the `adk-eval` command."""

from .cli import main

main(prog_name="adk-eval")
