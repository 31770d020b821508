"""``python -m adk_eval`` is the `adk-eval` command."""

from ._cli import main

main(prog_name="adk-eval")
